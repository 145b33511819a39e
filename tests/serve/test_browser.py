"""The rater page and the dashboard in a real headless browser (Chromium through Selenium).

A small driver-like yes/no study is answered with the keyboard alone until it stops (the
rater's id typed, then one digit per question, from the hidden φ the test reads); skip
and undo with their keys; a number typed and sent with Enter; the dashboard names the
recommendation; a rater waits while others hold a round and the page asks again by itself;
and a page asked for without the token gets 401.
"""

from __future__ import annotations

import pytest

from cbai_cli.kinds import load
from tests.serve.conftest import driver_instance, gaussian_instance, start_study

#: How long a page may take to show what a step expects (a generous bound: CI machines are loaded).
WAIT_SECONDS = 60


def _wait(browser, condition, what: str):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        # a short poll: a question is answered in milliseconds, and there are a hundred
        return WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.01).until(lambda _: condition())
    except TimeoutException:
        raise AssertionError(f"waited {WAIT_SECONDS} s for {what}; the page says: "
                             f"{browser.find_element('tag name', 'body').text!r}") from None


def _keys(browser, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(keys).perform()


def _shown(browser, element_id: str) -> bool:
    return browser.find_element("id", element_id).is_displayed()


def _query(browser) -> str | None:
    """The id of the question on screen, or None when none is."""
    return browser.execute_script('const q = document.getElementById("question");'
                                  'return q.hidden ? null : q.dataset.query;')


def _screen(browser) -> dict:
    """What the rater sees, read in one round trip: the question's id (None when none is
    shown), its label, and the whole text of the page."""
    return browser.execute_script(
        'const q = document.getElementById("question");'
        'return {query: q.hidden ? null : q.dataset.query, label: document.getElementById("q-label").textContent,'
        ' text: document.body.innerText};')


@pytest.fixture
def driver_study(tmp_path):
    instance = driver_instance(tmp_path / "drive.yaml")
    return instance, start_study(instance, tmp_path / "drive.db", "g-acol")


def test_a_rater_answers_with_the_keyboard_alone_until_the_study_stops(browser, serve, driver_study):
    instance, study = driver_study
    truth = load(instance)
    means = truth.truth.means(truth.problem.arms)
    labels = list(truth.meta["labels"])
    server = serve(study, "--undo-seconds", "0")

    browser.get(server.url("/"))
    _wait(browser, lambda: _shown(browser, "ask-id"), "the rater id form")
    _keys(browser, "ann\n")  # the id field has the focus
    _wait(browser, lambda: _query(browser) is not None, "the first question")
    picture = browser.find_element("css selector", "#q-media img")
    assert "/media/" in picture.get_attribute("src")
    _wait(browser, lambda: browser.execute_script("return arguments[0].naturalWidth", picture) > 0, "the picture")
    buttons = [button.text for button in browser.find_elements("css selector", "#q-answers button")]
    assert buttons == ["1yes", "2no"] or buttons == ["1 yes", "2 no"], buttons

    answered = 0
    while (screen := _screen(browser))["query"] is not None:
        assert "+1" not in screen["text"] and "−1" not in screen["text"] and "reward" not in screen["text"].lower()
        arm = labels.index(screen["label"])
        _keys(browser, "1" if means[arm] > 0 else "2")  # yes: it breaks the constraint
        answered += 1
        _wait(browser, lambda: _query(browser) != screen["query"], "the next question")
        assert answered < 1000
    assert _shown(browser, "done")
    assert "Thank you — the study is complete." in browser.find_element("id", "done").text

    status, reply = server.call("GET", "/api/status")
    assert reply["done"] and reply["recommended"] == 0 and reply["guaranteed"]
    assert reply["answered"] + reply["surplus"] == answered

    browser.get(server.url("/dashboard"))
    recommended = browser.find_element("id", "recommended").text
    assert labels[0] in recommended and "(arm 0)" in recommended
    assert browser.find_element("id", "guarantee").text.startswith("guaranteed")
    assert browser.find_element("css selector", ".plot svg").is_displayed()


def test_skip_and_undo_with_their_keys(browser, serve, driver_study):
    _, study = driver_study
    server = serve(study, "--undo-seconds", "120")
    browser.get(server.url("/?rater=bob"))
    _wait(browser, lambda: _query(browser) is not None, "the first question")
    first = _query(browser)
    _keys(browser, "2")
    _wait(browser, lambda: _query(browser) not in (None, first), "the second question")
    _keys(browser, "u")  # take the answer back: the first question again
    _wait(browser, lambda: _query(browser) == first and "Taken back" in browser.find_element("id", "message").text,
          "the first question after undo")
    _keys(browser, "s")
    _wait(browser, lambda: _query(browser) not in (None, first), "another question after the skip")
    _keys(browser, "u")  # a skip is taken back too
    _wait(browser, lambda: _query(browser) == first, "the skipped question after undo")

    status, log = server.call("GET", "/api/log")
    bobs = [(record["kind"], record["id"], record["answer"], record["undone"]) for record in log["records"]]
    assert bobs == [("answer", int(first), "no", True), ("undo", int(first), None, False),
                    ("skip", int(first), None, True), ("undo", int(first), None, False)]


def test_a_number_is_typed_and_sent_with_enter_and_a_bad_one_is_said(browser, serve, tmp_path):
    study = start_study(gaussian_instance(tmp_path / "irr.yaml"), tmp_path / "irr.db", "g-acol")
    server = serve(study, "--undo-seconds", "0")
    browser.get(server.url("/?rater=cy"))
    _wait(browser, lambda: _query(browser) is not None, "the first question")
    field = browser.find_element("id", "q-value")
    assert browser.switch_to.active_element == field
    first = _query(browser)
    _keys(browser, "abc\n")
    _wait(browser, lambda: "not a number" in browser.find_element("id", "message").text, "the refusal")
    assert _query(browser) == first
    from selenium.webdriver.common.keys import Keys

    _keys(browser, Keys.BACKSPACE * 3 + "0.25\n")  # the refused text stays in the field, which keeps the focus
    _wait(browser, lambda: _query(browser) != first, "the next question")
    status, log = server.call("GET", "/api/log")
    assert [(record["id"], record["rater"], record["value"]) for record in log["records"]] == [(int(first), "cy", 0.25)]


def test_a_page_without_the_token_is_refused(browser, serve, driver_study):
    _, study = driver_study
    server = serve(study)
    for path in ("/", "/dashboard"):
        browser.get(server.url(path, token=False))
        assert "needs its token" in browser.find_element("tag name", "body").text
    status, _ = server.call("GET", "/", token=None)
    assert status == 401


def test_a_rater_waits_while_others_hold_the_round_and_gets_a_question_after(browser, serve, tmp_path):
    study = start_study(gaussian_instance(tmp_path / "irr.yaml"), tmp_path / "irr.db", "acol")
    server = serve(study, "--undo-seconds", "0")
    held = {}  # ACOL asks a round at a time: other raters take every query of the first one
    while True:
        status, reply = server.call("GET", f"/api/next?rater=other{len(held)}")
        if reply["query"] is None:
            break
        held[f"other{len(held)}"] = reply["query"]["id"]
    browser.get(server.url("/?rater=ann"))
    _wait(browser, lambda: _shown(browser, "waiting"), "the waiting view")
    assert "Waiting for other raters" in browser.find_element("id", "waiting").text
    # the others answer their queries until the round is complete; answers at τ = 1 decide
    # no arm, so a next round follows
    for rater, query in held.items():
        while True:
            assert server.call("POST", "/api/answer", {"id": query, "rater": rater, "answer": 1.0})[0] == 200
            status, reply = server.call("GET", f"/api/next?rater={rater}")
            if reply["query"] is None or reply["query"]["id"] != query:
                break
    _wait(browser, lambda: _query(browser) is not None, "a question of the next round")
