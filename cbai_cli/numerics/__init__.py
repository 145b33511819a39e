"""The numerics: ridge designs and least squares (:mod:`.linalg`, :mod:`.ols`), the confidence
regimes (:mod:`.confidence`), optimal designs (:mod:`.design`), the compiled step
(:mod:`.kernels`), LAPACK/BLAS without scipy's import cost (:mod:`.fortran`), exact binomial
intervals (:mod:`.binomial`), and cvxpy solves stoppable at a deadline (:mod:`.stoppable`)."""
