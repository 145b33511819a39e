"""The one exception hierarchy for mistakes a user can make.

The CLI turns every :class:`CbaiError` into a one-line message on stderr and exit
code 2. Anything else is a bug and stays a traceback.
"""


#: The exit codes of the command line: a user's mistake or a failing outside resource, and
#: an interrupt (128 + SIGINT, what shells report for a Ctrl-C).
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
#: SIGTERM (:class:`Terminated`): 128 + SIGTERM.
EXIT_TERMINATED = 143
#: A reader of standard output that went away (``cbai algorithms | head -1``): 128 + SIGPIPE,
#: what shells report for a Unix tool the broken pipe ended.
EXIT_READER_GONE = 141


class CbaiError(Exception):
    """A problem caused by user input: a file, an option or an impossible request."""


class InstanceError(CbaiError):
    """An instance file is missing, unreadable or fails validation."""


class MissingTruthError(InstanceError):
    """An instance file without the hidden constraint (a real problem) was asked for what
    only the truth gives: bounds, simulated answers or scores."""


class OptionError(CbaiError):
    """A command-line option or configuration value makes no sense.

    Attributes:
        parameter: the library name of the option at fault (see :mod:`cbai_cli.contracts.options`),
            when one option is.
    """

    def __init__(self, message: str, parameter: str | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter


class UnknownNameError(OptionError):
    """A name (algorithm, family, regime) is not registered."""


def unknown_name_message(what: str, name: object, valid) -> str:
    """"unknown WHAT 'name'; did you mean 'x'? (valid: a, b, c)"; a name that is not a str
    (None, a number) gets no suggestion."""
    import difflib

    close = difflib.get_close_matches(name, list(valid), n=1) if isinstance(name, str) else []
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint} (valid: {', '.join(valid)})"


class ProtocolError(CbaiError):
    """A learner driven by hand (:class:`cbai_cli.contracts.protocol.CheckedLearner`) was asked after
    it stopped, told before it asked, told the answer of another query, or told an answer
    that does not fit its query (wrong length, not finite, beyond the largest observation)."""


class NumericalError(CbaiError):
    """A computation cannot be carried out in floating point at the instance's scale (a
    design matrix that is no longer numerically positive definite)."""


class OutputError(CbaiError):
    """Standard output cannot be written: its reader went away, or the disk under it is full."""


class ReaderGone(OutputError):
    """Standard output's reader went away (a pipe closed by ``head``): the command line ends
    quietly with :data:`EXIT_READER_GONE`, as Unix tools do; a library caller gets the error."""


class WorkerLostError(CbaiError):
    """A worker process of ``compare`` ended before it returned its batch (killed by the
    system's out-of-memory killer, ``kill -9``, a crash): the runs stop, every finished
    record stays in the store, and the same command resumes."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's cancel or time limit, ``kill``) while ``compare`` runs.

    A KeyboardInterrupt, so it takes Ctrl-C's path: worker processes are terminated,
    every finished record stays in the store, and the command says how to resume; it
    then exits with 143 (128 + SIGTERM) instead of Ctrl-C's 130.
    """
