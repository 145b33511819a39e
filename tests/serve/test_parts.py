"""The parts of ``cbai session serve`` that need no server: schemas, the OpenAPI document,
the token, the plot and the driver picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.serve import routes
from cbai_cli.serve.auth import allowed, checked_token, given_token
from cbai_cli.serve.dashboard import estimate_text
from cbai_cli.serve.plot import MAX_POINTS, STATE_COLOURS, arms_svg, intervals_svg
from cbai_cli.serve.schema import SchemaError, check, coerce

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("body, message", [
    ({"id": 1, "rater": "ann"}, "has no 'answer' field"),
    ({"id": "1", "rater": "ann", "answer": "yes"}, "id must be a whole number"),
    ({"id": True, "rater": "ann", "answer": "yes"}, "id must be a whole number, got true"),
    ({"id": 0, "rater": "ann", "answer": "yes"}, "id must be ≥ 1"),
    ({"id": 1, "rater": "", "answer": "yes"}, "rater must not be empty"),
    ({"id": 1, "rater": "=HYPERLINK(1)", "answer": "yes"}, "rater '=HYPERLINK(1)' is refused"),
    ({"id": 1, "rater": "ann", "answer": None}, "answer must be a text or a finite number, got null"),
    ({"id": 1, "rater": "ann", "answer": [1]}, "answer must be a text or a finite number, got a list"),
    ({"id": 1, "rater": "ann", "answer": float("inf")}, "answer must be a text or a finite number"),
    ({"id": 1, "rater": "ann", "answer": "x" * 1001}, "answer must have at most 1000 characters"),
    ({"id": 1, "rater": "ann", "answer": "yes", "anser": 1}, "unknown field 'anser'"),
    ([1, 2], "the body must be an object, got a list"),
])
def test_a_body_that_breaks_the_answer_schema_is_one_line_naming_the_field(body, message):
    with pytest.raises(SchemaError) as caught:
        check(routes.ANSWER_BODY, body)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bodies_the_schema_takes():
    for body in ({"id": 1, "rater": "ann", "answer": "yes"}, {"id": 7, "rater": "Zoë 2", "answer": 0.25, "key": "k"},
                 {"id": 1, "rater": "a.b@c-d_e", "answer": -3}):
        check(routes.ANSWER_BODY, body)


def test_parameters_are_read_as_their_schema_says():
    assert coerce({"type": "integer", "minimum": 0}, "12", "arm") == 12
    for text in ("1.5", "", "１２", "1e3", "9" * 30):
        with pytest.raises(SchemaError, match="arm must be a whole number"):
            coerce({"type": "integer"}, text, "arm")
    with pytest.raises(SchemaError, match="format must be one of 'json', 'csv'"):
        coerce({"type": "string", "enum": ["json", "csv"]}, "xml", "format")


def test_the_openapi_document_declares_every_route_once_with_its_schemas():
    document = routes.openapi("9.9")
    assert document["openapi"].startswith("3.")
    declared = [(path, method.upper()) for path, methods in document["paths"].items() for method in methods]
    assert sorted(declared) == sorted((route.path, route.method) for route in routes.ROUTES)
    assert len(set(declared)) == len(declared)
    answer = document["paths"]["/api/answer"]["post"]
    assert answer["requestBody"]["content"]["application/json"]["schema"] is routes.ANSWER_BODY
    assert set(answer["responses"]) == {"200", "400", "401", "404", "422", "503"}
    assert answer["responses"]["422"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert document["paths"]["/api/next"]["get"]["parameters"][0] == {
        "name": "rater", "in": "query", "required": True, "description": "the rater's id", "schema": routes.RATER}
    assert set(document["components"]["securitySchemes"]) == {"bearer", "token"}


def test_every_route_names_a_function_of_the_api():
    from cbai_cli.serve import api

    for route in routes.ROUTES:
        assert callable(getattr(api, route.operation)), route.operation


def test_the_token_comes_from_the_bearer_header_or_the_query_and_must_match_whole():
    assert given_token(b"token=abc", []) == "abc"
    assert given_token(b"x=1", [(b"authorization", b"Bearer  xyz ")]) == "xyz"
    assert given_token(b"token=abc", [(b"Authorization", b"Basic xyz")]) == "abc"
    assert given_token(b"", []) is None
    assert allowed("secret-token", "secret-token")
    for wrong in (None, "", "secret-toke", "secret-token2", "SECRET-TOKEN", "sécret-token"):
        assert not allowed(wrong, "secret-token")


def test_a_given_token_must_be_long_enough_and_fit_in_a_link():
    assert checked_token("abcdefgh") == "abcdefgh"
    assert len(checked_token(None)) >= 40 and checked_token(None) != checked_token(None)
    for bad in ("short", "has space here", "a&b=cdefgh", "x" * 257):
        with pytest.raises(OptionError, match="--token must be 8 to 256 characters"):
            checked_token(bad)


def test_the_estimate_is_a_dash_when_there_is_none():
    assert estimate_text(None) == "—"
    assert estimate_text({"remaining": 1500, "total": 1800, "arm": 2}) == "1,500 (of ~1,800)"
    assert estimate_text({"remaining": 0, "total": 40, "arm": 0}) == "0 (of ~40)"


def _polylines(svg: str) -> list[list[tuple[float, float]]]:
    root = ET.fromstring(svg)
    return [[tuple(map(float, pair.split(","))) for pair in line.get("points").split()]
            for line in root.iter(f"{SVG}polyline")]


def test_the_plot_draws_two_lines_per_arm_and_tau_between_them():
    # arm 0 ends below τ = 1, arm 1 above; the first point's infinite bounds lie on the frame
    history = [(0, np.array([-np.inf, -np.inf]), np.array([np.inf, np.inf])),
               (10, np.array([0.2, 0.9]), np.array([1.5, 2.5])),
               (20, np.array([0.4, 1.2]), np.array([0.8, 1.9]))]
    svg = intervals_svg(history, 1.0, ["left", "right"])
    lines = _polylines(svg)
    assert len(lines) == 4 and all(len(line) == 3 for line in lines)
    root = ET.fromstring(svg)
    tau = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")][0]
    tau_y = float(tau.get("y1"))
    upper0, lower0, upper1, lower1 = lines
    assert upper0[-1][1] > tau_y  # arm 0's upper bound ends below τ (larger y is lower)
    assert lower1[-1][1] < tau_y  # arm 1's lower bound ends above τ
    assert upper0[0][1] == upper1[0][1] == min(y for line in lines for _, y in line)  # +∞ on the top edge
    assert "τ = 1" in svg and "left" in svg and "right" in svg


def test_the_plot_of_a_long_history_keeps_at_most_its_point_budget_with_the_last():
    history = [(i, np.array([0.5 - 1 / (i + 1)]), np.array([0.5 + 1 / (i + 1)])) for i in range(5000)]
    lines = _polylines(intervals_svg(history, 0.0, ["a"]))
    assert len(lines[0]) <= MAX_POINTS
    assert lines[0][-1][0] == max(x for x, _ in lines[0])


def test_the_plot_over_the_answers_draws_only_the_arms_shown():
    history = [(10, np.array([0.2, 0.9, -1.0]), np.array([1.5, 2.5, 0.5])),
               (20, np.array([0.4, 1.2, -0.5]), np.array([0.8, 1.9, 0.1]))]
    svg = intervals_svg(history, 1.0, ["left", "right", "middle"], shown=[2])
    assert len(_polylines(svg)) == 2 and "middle" in svg and "left" not in svg
    assert "no arm left open" in intervals_svg(history, 1.0, ["a", "b", "c"], shown=[])


def test_every_arm_now_is_a_bar_by_reward_coloured_by_state_the_recommended_black():
    arms = [{"arm": 0, "lower": 0.2, "upper": 0.8, "state": "feasible"},
            {"arm": 1, "lower": None, "upper": None, "state": "uncertain"},
            {"arm": 2, "lower": 1.5, "upper": 2.0, "state": "infeasible"}]
    svg = arms_svg(arms, [1.0, 3.0, 2.0], ["a", "b", "c"], 1.0, recommended=0)
    bars = [line for line in ET.fromstring(svg).iter(f"{SVG}line") if line.find(f"{SVG}title") is not None]
    # by reward, highest left: arm 1, arm 2, arm 0
    assert [bar.find(f"{SVG}title").text.split(" (")[0] for bar in bars] == ["b", "c", "a"]
    assert [bar.get("stroke") for bar in bars] == [STATE_COLOURS["uncertain"], STATE_COLOURS["infeasible"], "#000000"]
    xs = [float(bar.get("x1")) for bar in bars]
    assert xs == sorted(xs)
    tau_y = float([line for line in ET.fromstring(svg).iter(f"{SVG}line") if line.get("stroke-dasharray")][0].get("y1"))
    assert float(bars[2].get("y2")) > tau_y  # the feasible arm's lower end lies below τ (larger y is lower)


def test_the_plot_without_answers_says_so():
    assert "no answers yet" in intervals_svg([], 0.0, ["a", "b"])


def test_a_driver_arm_is_drawn_as_svg_without_its_reward(tmp_path):
    from cbai_cli.kinds import load
    from cbai_cli.serve.pictures import driver_drawer
    from tests.serve.conftest import driver_instance

    instance = load(driver_instance(tmp_path / "drive.yaml"))
    draw = driver_drawer(instance)
    pictures = [draw(arm) for arm in range(instance.n_arms)]
    for picture in pictures:
        root = ET.fromstring(picture)
        assert root.tag == f"{SVG}svg"
        assert "reward" not in picture.lower() and "<text" not in picture
        assert len(list(root.iter(f"{SVG}polyline"))) == 2  # the other car's path and the agent's
    assert len(set(pictures)) == instance.n_arms


def test_an_instance_that_is_not_a_driver_instance_has_no_drawer(tmp_path):
    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.serve.pictures import driver_drawer

    assert driver_drawer(generate_instance("irrelevant-dims", d=3, eps=0.2)) is None


@pytest.mark.parametrize("lease, undo_seconds, port, message", [
    (7 * 24 * 3600 + 1.0, 10.0, 0, r"^--lease must be a number of seconds > 0 and at most 604,800 \(a week\), got 604801.0$"),
    (0.0, 10.0, 0, r"^--lease must be a number of seconds > 0 .*, got 0.0$"),
    (300.0, float("nan"), 0, r"^--undo-seconds must be a number of seconds ≥ 0 .*, got nan$"),
    (300.0, 10.0, 65536, r"^--port must be 0 to 65535, got 65536$"),
])
def test_serve_checks_its_options_before_it_binds_or_opens_anything(tmp_path, lease, undo_seconds, port, message):
    from cbai_cli.serve.listen import serve

    # the study does not exist: the option is what is refused, naming the flag and the parameter
    with pytest.raises(OptionError, match=message) as caught:
        serve(tmp_path / "none.sqlite", "127.0.0.1", port, None, lease, undo_seconds, print)
    assert caught.value.parameter == message[3:].split(" ")[0].lstrip("-").replace("-", "_")


def test_a_session_takes_the_longest_lease_that_serve_takes(tmp_path):
    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.session import Session

    with Session.start(tmp_path / "study.sqlite", generate_instance("irrelevant-dims", d=3, eps=0.2)) as session:
        assert len(session.ask(1, lease=7 * 24 * 3600.0)) == 1
        with pytest.raises(OptionError, match=r"^--lease must be .* at most 604,800 \(a week\), got 604801.0$"):
            session.ask(1, lease=7 * 24 * 3600 + 1.0)
