"""The console script: an interrupt while the command line loads is one line and exit code 130."""

from __future__ import annotations

import pytest

from cbai_cli import entry
from cbai_cli.cli import app as cli


def test_an_interrupt_while_loading_ends_as_one_line_and_exit_code_130(monkeypatch, capsys):
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted)
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "cbai: interrupted\n"


def test_the_console_script_runs_the_command_line(monkeypatch):
    ran = []
    monkeypatch.setattr(cli, "main", lambda: ran.append(True))
    entry.main()
    assert ran == [True]
