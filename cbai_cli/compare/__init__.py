"""``cbai compare``: many algorithms × seeds × instances, in parallel, resumable.

- :mod:`~cbai_cli.compare.grid`: sources, generator specs with sweeps, algorithm
  specs, experiment files, and the plan of runs (with seeds and run keys).
- :mod:`~cbai_cli.compare.execute`: runs a plan in this process, on a local process
  pool or on a Dask cluster, with adaptive batching of short runs.
- :mod:`~cbai_cli.compare.store`: JSON Lines and SQLite stores of records (resume).
- :mod:`~cbai_cli.compare.summary`: medians, quartiles and ratios per instance group.
- :mod:`~cbai_cli.compare.render` and :mod:`~cbai_cli.compare.plot`: tables, JSON,
  CSV and figures in the layout of the paper's Figure 2 (Lindner et al., ICML 2022).

This package file imports nothing heavy, so worker processes can pin BLAS threads
before numpy loads.
"""
