"""The ``cbai`` kind: constrained best-arm identification (Lindner et al. 2022).

- :mod:`.kind`       the kind's class (:class:`~cbai_cli.kinds.base.InstanceKind`): runs, records, tables
- :mod:`.instance`   the instance: arms, rewards, threshold, hidden constraint, noise; its file fields
- :mod:`.noise`      noise models of the constraint feedback (§2 and Appendix C)
- :mod:`.questions`  what a study asks its raters; :mod:`.answers` how typed answers become observations
- :mod:`.bounds`     Theorem 1's lower bound and Proposition 1's upper bound (``cbai bound``)
- :mod:`.guess`      a guessed constraint for a file without one
- :mod:`.families`   the generated families of ``cbai generate``
"""
