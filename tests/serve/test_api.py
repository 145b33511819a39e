"""The JSON API of a real server: every bad request gets a 4xx ``{"error": "one line"}``,
every good one a reply that fits its declared schema; the command's own failures are one
line and exit code 2, and SIGTERM stops it cleanly."""

from __future__ import annotations

import signal
import socket

import pytest

from cbai_cli.serve import routes
from cbai_cli.serve.schema import check
from cbai_cli.session.session import Session
from tests.serve.conftest import TOKEN, binary_instance, start_server, start_study


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server of a yes/no study (G-ACOL), with one query handed to rater ann."""
    folder = tmp_path_factory.mktemp("api")
    study = start_study(binary_instance(folder / "two.yaml"), folder / "two.db", "g-acol")
    running = start_server(study, "--undo-seconds", "60")
    status, reply = running.call("GET", "/api/next?rater=ann")
    assert status == 200 and reply["query"]["id"] == 1, reply
    yield running
    running.stop()


DEEP = b"[" * 20_000 + b"]" * 20_000

BAD_REQUESTS = [
    # (method, path, body or raw bytes, token, status, a part of the message)
    ("GET", "/api/next", None, "", 400, "'rater' is missing"),
    ("GET", "/api/next?rater=", None, "", 400, "rater must not be empty"),
    ("GET", "/api/next?rater=%3Dcmd", None, "", 400, "rater '=cmd' is refused"),
    ("GET", "/api/next?rater=" + "a" * 65, None, "", 400, "at most 64 characters"),
    ("POST", "/api/answer", b"{not json", "", 400, "the body is not JSON"),
    ("POST", "/api/answer", b"", "", 400, "the body is empty"),
    ("POST", "/api/answer", b"\xff\xfe\x00", "", 400, "the body is not JSON"),
    ("POST", "/api/answer", b'{"id": 1, "rater": "ann", "answer": NaN}', "", 400, "NaN is not a JSON number"),
    ("POST", "/api/answer", DEEP, "", 400, "the body is not JSON"),
    ("POST", "/api/answer", b"x" * 70_000, "", 413, "over 65,536 bytes"),
    ("POST", "/api/answer", [1, 2], "", 400, "the body must be an object"),
    ("POST", "/api/answer", {"id": 1, "rater": "ann"}, "", 400, "has no 'answer' field"),
    ("POST", "/api/answer", {"id": "one", "rater": "ann", "answer": "yes"}, "", 400, "id must be a whole number"),
    ("POST", "/api/answer", {"id": 1, "rater": "ann", "answer": "yes", "extra": 1}, "", 400, "unknown field 'extra'"),
    ("POST", "/api/answer", {"id": 99999, "rater": "ann", "answer": "yes"}, "", 404, "no query 99999"),
    ("POST", "/api/answer", {"id": 1, "rater": "ann", "answer": "maybe"}, "", 422, "'maybe'"),
    ("POST", "/api/answer", {"id": 1, "rater": "ann", "answer": 0.5}, "", 422, "0.5"),
    ("POST", "/api/skip", {"id": 99999, "rater": "ann"}, "", 404, "no query 99999"),
    ("POST", "/api/skip", {"rater": "ann"}, "", 400, "has no 'id' field"),
    ("POST", "/api/undo", {"rater": "nobody"}, "", 409, "nothing to undo"),
    ("POST", "/api/undo", {}, "", 400, "has no 'rater' field"),
    ("GET", "/api/log?format=xml", None, "", 400, "format must be one of 'json', 'csv'"),
    ("GET", "/media/abc", None, "", 400, "arm must be a whole number"),
    ("GET", "/media/7", None, "", 404, "no arm 7"),
    ("GET", "/media/0", None, "", 404, "arm 0 has no picture"),
    ("GET", "/api/nothing", None, "", 404, "no route /api/nothing"),
    ("DELETE", "/api/status", None, "", 405, "DELETE is not a method of /api/status"),
    ("GET", "/api/answer", None, "", 405, "GET is not a method of /api/answer"),
    ("GET", "/api/status", None, None, 401, "needs its token"),
    ("GET", "/api/status", None, "wrong-token-0123456789", 401, "needs its token"),
    ("GET", "/", None, None, 401, "needs its token"),
    ("GET", "/dashboard", None, None, 401, "needs its token"),
    ("GET", "/openapi.json", None, None, 401, "needs its token"),
    ("GET", "/media/0", None, None, 401, "needs its token"),
    ("GET", "/api/nothing", None, None, 401, "needs its token"),
]


@pytest.mark.parametrize("method, path, body, token, status, message", BAD_REQUESTS,
                         ids=[f"{case[0]} {case[1][:30]} {case[4]}" for case in BAD_REQUESTS])
def test_a_bad_request_gets_a_4xx_with_a_one_line_json_error(server, method, path, body, token, status, message):
    raw = body if isinstance(body, bytes) else None
    got, reply = server.call(method, path, None if raw is not None else body, token=token, raw=raw)
    assert got == status, reply
    assert isinstance(reply, dict) and list(reply) == ["error"], reply
    check(routes.ERROR, reply)
    assert message in reply["error"]
    assert "\n" not in reply["error"] and "Traceback" not in reply["error"]


def test_the_token_may_come_in_the_query(server):
    status, reply = server.call("GET", f"/api/status?token={TOKEN}", token=None)
    assert status == 200 and reply["algorithm"] == "g-acol"


def test_every_reply_fits_its_declared_schema_and_an_answer_sent_twice_counts_once(server):
    status, reply = server.call("GET", "/api/next?rater=bob")
    assert status == 200
    check(routes.NEXT, reply)
    query = reply["query"]
    assert query["question"] and query["answers"] == ["yes", "no"] and query["numbers"] is False
    assert query["media"] is None and query["expires"] is not None
    answer = {"id": query["id"], "rater": "bob", "answer": "no", "key": "bob-1"}
    first = server.call("POST", "/api/answer", answer)
    again = server.call("POST", "/api/answer", answer)
    assert first == again == (200, {"recorded": True, "surplus": False, "done": False})
    check(routes.RECORDED, first[1])

    status, undone = server.call("POST", "/api/undo", {"rater": "bob"})
    assert status == 200 and undone["query"]["id"] == query["id"]
    check(routes.UNDONE, undone)
    status, skipped = server.call("POST", "/api/skip", {"id": query["id"], "rater": "bob"})
    assert (status, skipped) == (200, {"skipped": True})

    status, current = server.call("GET", "/api/status")
    assert status == 200
    check(routes.STATUS, current)
    assert current["skipped"] == 1
    status, log = server.call("GET", "/api/log")
    check(routes.LOG, log)
    bobs = [(record["kind"], record["id"], record["answer"], record["undone"]) for record in log["records"]
            if record["rater"] == "bob"]
    assert bobs == [("answer", query["id"], "no", True), ("undo", query["id"], None, False),
                    ("skip", query["id"], None, False)]
    status, text = server.call("GET", "/api/log?format=csv")
    lines = text.splitlines()
    assert lines[0] == "seq,kind,id,arm,label,rater,answer,value,surplus,held,undone,time"
    assert len(lines) == 1 + len(log["records"])

    status, document = server.call("GET", "/openapi.json")
    assert status == 200 and set(document["paths"]) == {route.path for route in routes.ROUTES}


def test_the_pages_are_whole_documents_that_keep_the_token(server):
    status, page = server.call("GET", "/")
    assert status == 200 and page.startswith("<!doctype html>")
    assert '<meta name="viewport"' in page and TOKEN in page
    assert "+1" not in page and "−1" not in page and "reward" not in page
    status, page = server.call("GET", "/dashboard")
    assert status == 200 and f"/?token={TOKEN}" in page and 'http-equiv="refresh"' in page
    assert 'id="recommended"' in page and "<svg" in page


def serve_in_process(*args) -> tuple[int, str, str]:
    """``cbai session serve ARGS`` in this process (for its failures, which come before it
    serves): exit code, stdout, stderr."""
    from typer.testing import CliRunner

    from cbai_cli.cli.app import app

    result = CliRunner().invoke(app, ["session", "serve", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_serve_on_a_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = serve_in_process(tmp_path / "study.db", "--port", port)
    assert (code, out) == (2, "")
    assert err == f"cbai: error: port {port} on 127.0.0.1 is in use (another server?); choose another with --port, " \
                  "or 0 for a free one\n"


@pytest.mark.parametrize("args, message", [
    (["--host", "no-such-host.invalid"], "--host no-such-host.invalid: not an address of this machine"),
    (["--host", "192.0.2.1"], "--host 192.0.2.1 is not an address of this machine"),
    (["--token", "short"], "--token must be 8 to 256 characters"),
    (["--lease", "0"], "--lease must be a number of seconds > 0"),
    (["--undo-seconds", "-1"], "--undo-seconds must be a number of seconds ≥ 0"),
    (["--port", "70000"], "--port must be 0 to 65535"),
])
def test_serve_with_a_bad_option_is_one_line_and_exit_2(tmp_path, args, message):
    code, out, err = serve_in_process(tmp_path / "study.db", "--port", "0", *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


def test_serve_of_a_study_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "junk.db").write_bytes(b"not a study at all" * 100)
    for study in (tmp_path / "missing.db", tmp_path / "junk.db"):
        code, out, err = serve_in_process(study, "--port", "0")
        assert (code, out) == (2, "")
        assert err.startswith(f"cbai: error: {study}") and err.count("\n") == 1, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly(tmp_path, sig):
    study = start_study(binary_instance(tmp_path / "two.yaml"), tmp_path / "two.db", "g-acol")
    running = start_server(study)
    status, reply = running.call("GET", "/api/next?rater=ann")
    assert running.call("POST", "/api/answer", {"id": reply["query"]["id"], "rater": "ann", "answer": "no"})[0] == 200
    assert running.stop(sig) == 0, running.describe()
    assert running.stdout[-1] == f"stopped; every answer is recorded in {study}\n"
    assert "Traceback" not in "".join(running.stderr)
    with Session.open(study) as session:
        assert [(record["kind"], record["rater"], record["answer"]) for record in session.records()] == [
            ("answer", "ann", "no")]


def test_a_study_file_that_fails_under_the_server_is_503_in_one_line(tmp_path, serve):
    study = start_study(binary_instance(tmp_path / "two.yaml"), tmp_path / "two.db", "g-acol")
    running = serve(study)
    assert running.call("GET", "/api/next?rater=ann")[0] == 200
    study.rename(tmp_path / "moved.db")  # removed while open: nothing more may be written to it
    status, reply = running.call("GET", "/api/next?rater=ann")
    assert status == 503 and list(reply) == ["error"]
    assert "removed or replaced while it was open" in reply["error"] and "\n" not in reply["error"]
