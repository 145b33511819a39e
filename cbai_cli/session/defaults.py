"""Defaults of live sessions that the command line shows in its help (kept apart from
:mod:`cbai_cli.session.session`, so that ``cbai --help`` loads no numpy)."""

#: How long a handed-out query stays with its rater before it returns to the pool (s).
DEFAULT_LEASE = 300.0
#: How long after an answer given at a terminal or on the web page its rater may undo it
#: (s); the algorithm is told the answer only after that.
DEFAULT_GRACE = 10.0
