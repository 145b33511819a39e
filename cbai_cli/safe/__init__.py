"""Safe linear bandits: Safe-LUCB, LinGapE and Safe-LinGapE (Amani et al. 2019; "Price of Safety in Linear BAI"; Xu et al. 2018).

Pure library code: numpy arrays in and out, no printing, no global state. Every random
draw comes from a ``numpy.random.Generator`` that the caller passes in.

Modules, one job each:

- :mod:`.confidence`   regularised least squares, confidence radii, closed forms (§1)
- :mod:`.polytopes`    vertex enumeration, polygon clipping, LP/disc optimisation (§2.5)
- :mod:`.problems`     frozen problem dataclasses, instance builders, truths (§2.8, §3.5, §4.7)
- :mod:`.exploration`  the safe exploration set D^w, λ_−, t_δ, T_Δ, T_0 (§2.2, §2.4)
- :mod:`.safe_lucb`    Safe-LUCB as an ask/tell state machine (§2)
- :mod:`.lingape`      LinGapE as an ask/tell state machine (§3)
- :mod:`.safe_lingape` Safe-LinGapE as an ask/tell state machine (§4)
- :mod:`.environment`  simulated environments (the only readers of μ*/θ*) and run loops
"""
