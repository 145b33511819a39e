"""Runs: requests and the one ask/tell loop (:mod:`.simulate`), ``cbai solve`` as a library
call (:mod:`.solving`), worker processes and BLAS threads (:mod:`.parallel`), progress on
stderr (:mod:`.progress`) and SIGTERM handled like Ctrl-C (:mod:`.interrupts`)."""
