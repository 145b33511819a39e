"""The Click group behind ``cbai``: every :class:`~cbai_cli.contracts.errors.CbaiError` and every
usage error ends as one line on stderr with exit code 2 (a failed stdout too; a reader that went
away ends it quietly with 141), an interrupt as one line with 130, a termination with 143."""

from __future__ import annotations

import errno
import sys

import typer
from typer.core import TyperGroup

try:  # Typer ≥ 0.20 vendors Click as typer._click; older releases use Click itself.
    from typer import _click as click
except ImportError:  # pragma: no cover
    import click

from cbai_cli.contracts.errors import (EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_READER_GONE, EXIT_TERMINATED, CbaiError,
                                      OutputError, ReaderGone, Terminated)


#: Errors of looking at a path, whatever the command did with it, and how each is said.
PATH_ERRORS = {errno.ENAMETOOLONG: "file name too long",
               errno.EACCES: "permission denied (a folder on the way may not be searched)"}


class CbaiGroup(TyperGroup):
    """Turns user errors and usage errors into one line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CbaiError as error:
            raise typer.Exit(report(error)) from None
        except Terminated:  # before Typer makes every KeyboardInterrupt an Exit(130)
            raise typer.Exit(EXIT_TERMINATED) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from cbai_cli.typer_adapter.plain_values import install

        install(self, ctx)  # before any value is read: most need no Pydantic
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from cbai_cli.io.stdout import GuardedStdout

        stdout = sys.stdout
        sys.stdout = GuardedStdout(stdout)  # a full disk or a closed pipe under stdout: one line
        try:
            code = self._main(args, prog_name, complete_var, **extra)
        except CbaiError as error:  # stdout failed after the command, or while it reported
            code = report(error)
        finally:
            sys.stdout = stdout
        if standalone_mode:
            sys.exit(code)
        return code

    def _main(self, args, prog_name, complete_var, **extra) -> int:
        """The command's exit code, its errors reported on stderr."""
        try:
            code = super().main(args, prog_name or "cbai", complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.format_message())
            code = 0
        except click.exceptions.UsageError as error:
            message = error.format_message().replace("\n", " ")
            command = (" ".join(["cbai", *error.ctx.command_path.split()[1:]]) + ": "
                       if error.ctx is not None and error.ctx.parent is not None else "cbai: ")
            click.echo(f"{command}error: {message}", err=True)
            code = EXIT_BAD_INPUT
        except (typer.Abort, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
        except click.exceptions.ClickException as error:
            click.echo(f"cbai: error: {error.format_message()}", err=True)
            code = error.exit_code
        except OSError as error:
            # pathlib's exists()/is_file()/is_dir() let a name over 255 bytes (or a path over
            # 4096) and a folder that may not be searched escape from wherever a path is
            # looked at: one line here instead of a traceback
            if error.errno not in PATH_ERRORS or error.filename is None:
                raise
            from cbai_cli.contracts.validation import safe_text

            name = safe_text(str(error.filename))
            shown = name if len(name) <= 200 else f"{name[:40]}…{name[-15:]}"
            click.echo(f"cbai: error: {shown}: {PATH_ERRORS[error.errno]}", err=True)
            code = EXIT_BAD_INPUT
        code = code if isinstance(code, int) else 0
        if code == EXIT_INTERRUPTED:  # also Typer's silent Exit(130) for a Ctrl-C
            click.echo("cbai: interrupted", err=True)
        elif code == EXIT_TERMINATED:
            click.echo("cbai: terminated", err=True)
        sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
        return code


def report(error: CbaiError) -> int:
    """One line on stderr (the error's text may quote a file's contents: no control
    characters); the exit code. After a failed stdout, what is left in it goes to the null
    device (quietly at exit); a reader that went away is no error to report, as for Unix
    tools (``cbai algorithms | head -1``)."""
    from cbai_cli.io.stdout import quiet_stdout
    from cbai_cli.contracts.validation import safe_text

    if isinstance(error, OutputError):
        quiet_stdout(sys.stdout)
    if isinstance(error, ReaderGone):
        return EXIT_READER_GONE
    click.echo(f"cbai: error: {safe_text(str(error))}", err=True)
    return EXIT_BAD_INPUT

