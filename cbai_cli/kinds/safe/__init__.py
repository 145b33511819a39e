"""The safe kinds, ``safe-regret`` (Safe-LUCB's stage-wise safe linear bandit, Amani et al.
2019) and ``safe-bai`` (safe best-arm identification with partial pulls, "Price of Safety"):
their files, problems, truths, environments, bounds and tables. The algorithms that run
on them live in :mod:`cbai_cli.algorithms.safe`; runs go through the one run API,
:func:`cbai_cli.run.simulate.prepare` and :func:`cbai_cli.run.simulate.run_once`.

Modules, one job each (Amani = Amani et al. 2019, PoS = "Price of Safety"):

- :mod:`.base`, :mod:`.regret`, :mod:`.bai`  the two instance kinds (:class:`~cbai_cli.kinds.base.InstanceKind`)
- :mod:`.action_sets`      the action sets D_0: box, ball, finite arms (Amani, §2)
- :mod:`.polytopes`        vertex enumeration, polygon clipping, LP/disc optimisation (Amani, Algorithm 1 step 10)
- :mod:`.problems`         frozen, validated settings (what the learner knows) and the problems that add the truth (Amani, §2; PoS, §3.3)
- :mod:`.paper_instances`  Amani's Appendix F instances, the Soare instance of Xu et al. 2018, PoS §5
- :mod:`.truths`           x* and Δ of a regret problem; γ_k and k* of a safe best-arm problem
- :mod:`.environment`      environments (the only readers of μ*/θ*) and the scoring of a run
- :mod:`.solving`          the configure functions the registry names, and the records of a run
- :mod:`.files`            the instance files, the run options that replace their constants, ``cbai generate`` builders
- :mod:`.bounds`           ``cbai bound`` on the safe kinds (Amani, Lemma 1, Theorems 2–3; LinGapE's H_ε)
- :mod:`.render`           the tables of ``cbai solve`` and ``cbai bound`` on the safe kinds
"""
