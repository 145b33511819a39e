"""Safe linear bandits: Safe-LUCB (Amani, Alizadeh, Thrampoulidis 2019), LinGapE (Xu, Honda,
Sugiyama 2018) and Safe-LinGapE ("Price of Safety in Linear Best Arm Identification").

Pure library code: numpy arrays in and out, no printing, no global state. Every random
draw comes from a ``numpy.random.Generator`` that the caller passes in. The design state
and the radius formulas are shared with the CBAI algorithms (:mod:`cbai_cli.linalg`,
:mod:`cbai_cli.confidence`); runs go through the one run API, :func:`cbai_cli.simulate.prepare`
and :func:`cbai_cli.simulate.run_once`.

Modules, one job each (Amani = Amani et al. 2019, PoS = "Price of Safety"):

- :mod:`.action_sets`      the action sets D_0: box, ball, finite arms (Amani, §2)
- :mod:`.confidence_sets`  closed forms over the ellipsoid of Amani's Theorem 1 and the authors' L1 polytope
- :mod:`.polytopes`        vertex enumeration, polygon clipping, LP/disc optimisation (Amani, Algorithm 1 step 10)
- :mod:`.problems`         frozen, validated settings (what the learner knows) and the problems that add the truth (Amani, §2; PoS, §3.3)
- :mod:`.paper_instances`  Amani's Appendix F instances, the Soare instance of Xu et al. 2018, PoS §5
- :mod:`.truths`           x* and Δ of a regret problem; γ_k and k* of a safe best-arm problem
- :mod:`.exploration`      the safe exploration set D^w, λ_−, t_δ, T_Δ, T_0 (Amani, §2.2, §3.2–3.4)
- :mod:`.safe_lucb`        Safe-LUCB as an ask/tell learner (Amani, Algorithm 1)
- :mod:`.lingape`          LinGapE as an ask/tell learner (Xu et al. 2018, Algorithms 1–2)
- :mod:`.safe_lingape`     Safe-LinGapE as an ask/tell learner (PoS, §4)
- :mod:`.environment`      environments (the only readers of μ*/θ*) and the scoring of a run
- :mod:`.solving`          the configure functions the registry names, and the records of a run
- :mod:`.files`            the ``safe-regret`` and ``safe-bai`` instance files, the run options that replace their constants, ``cbai generate`` builders
- :mod:`.bounds`           ``cbai bound`` on the safe kinds (Amani, Lemma 1, Theorems 2–3; LinGapE's H_ε)
- :mod:`.render`           the tables of ``cbai solve`` and ``cbai bound`` on the safe kinds
"""
