"""Safe linear bandit algorithms: Safe-LUCB (Amani, Alizadeh, Thrampoulidis 2019), LinGapE
(Xu, Honda, Sugiyama 2018) and Safe-LinGapE ("Price of Safety in Linear Best Arm
Identification"), each an ask/tell learner on the settings of :mod:`cbai_cli.kinds.safe`.

Pure library code: numpy arrays in and out, no printing, no global state. Every random
draw comes from a ``numpy.random.Generator`` that the caller passes in. The design state
and the radius formulas are shared with the CBAI algorithms (:mod:`cbai_cli.numerics.linalg`,
:mod:`cbai_cli.numerics.confidence`).

Modules, one job each (Amani = Amani et al. 2019, PoS = "Price of Safety"):

- :mod:`.confidence_sets`  closed forms over the ellipsoid of Amani's Theorem 1 and the authors' L1 polytope
- :mod:`.exploration`      the safe exploration set D^w, λ_−, t_δ, T_Δ, T_0 (Amani, §2.2, §3.2–3.4)
- :mod:`.safe_lucb`        Safe-LUCB (Amani, Algorithm 1)
- :mod:`.lingape`          LinGapE (Xu et al. 2018, Algorithms 1–2)
- :mod:`.safe_lingape`     Safe-LinGapE (PoS, §4)
"""
