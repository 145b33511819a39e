"""``cbai compare``: many algorithms × seeds × instances, in parallel, resumable.

- :mod:`~cbai_cli.compare.specs`: algorithm specs ``NAME[:REGIME][:OPTION=VALUE,...]``.
- :mod:`~cbai_cli.compare.sources`: instance files, folders and generator specs with
  sweeps, as instance groups.
- :mod:`~cbai_cli.compare.study_file`: experiment files (YAML).
- :mod:`~cbai_cli.compare.plan`: the grid and the plan of runs (seeds, shards, run keys).
- :mod:`~cbai_cli.compare.study`: ``cbai compare`` as library calls (plan, run, merge).
- :mod:`~cbai_cli.compare.execute`: runs a plan in batches, adaptive for short runs, on a
  backend (:mod:`~cbai_cli.compare.backends`: this process, a local process pool or a Dask
  cluster); :mod:`~cbai_cli.compare.tasks` is the work a batch carries to its worker.
- :mod:`~cbai_cli.compare.store`: JSON Lines and SQLite stores of records (resume).
- :mod:`~cbai_cli.compare.summary`: medians, quartiles and ratios per instance group.
- :mod:`~cbai_cli.compare.render` and :mod:`~cbai_cli.compare.plot`: tables, JSON,
  CSV and figures in the layout of the paper's Figure 2 (Lindner et al., ICML 2022).

This package file imports nothing heavy, so worker processes can pin BLAS threads
before numpy loads.
"""
