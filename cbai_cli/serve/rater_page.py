"""The rater page: one question at a time, answered with the keyboard or by tapping.

The server sends this page once; its script then talks to the JSON API
(:mod:`cbai_cli.serve.routes`) with the page's token. The page asks for the rater's id
once and keeps it in the browser's localStorage (``?rater=ID`` in the link sets it), then
shows the question, the arm's label and picture, and one button per answer label (a
number field when the study asks for numbers), with Skip and Undo. Keys: 1…9 pick the
answer buttons in order, ``s`` skips, ``u`` takes back one's last answer or skip, Enter
submits a number; each button shows its key. It never shows an observation's value
(+1/−1) nor an arm's reward. Each answer carries a key of its own, so a request sent
again after a lost connection is recorded once. With nothing to ask right now the page
says so and asks again every few seconds; when the study is done it thanks the rater.
"""

from __future__ import annotations

from cbai_cli.serve.html import document, json_for_script

BODY = """
<div class="who" id="bar" hidden><span>Rater: <b id="rater-name"></b></span>
<a href="#" id="change">not you?</a></div>
<section id="ask-id" hidden>
<h1>Welcome</h1>
<form id="id-form" class="stack">
<label for="rater-input">Your rater id (as given to you by the study's owner)</label>
<input id="rater-input" name="rater" autocomplete="username" maxlength="64" required autofocus>
<button type="submit" class="primary"><kbd>Enter</kbd>Start</button>
</form>
</section>
<section id="question" hidden>
<p class="label" id="q-label"></p>
<div id="q-media"></div>
<h1 id="q-text"></h1>
<div id="q-answers" class="stack"></div>
<form id="q-number" class="stack" hidden>
<input id="q-value" inputmode="decimal" autocomplete="off" aria-label="your answer (a number)">
<button type="submit" class="primary"><kbd>Enter</kbd>Submit</button>
</form>
<div class="row"><button type="button" id="skip"><kbd>s</kbd>Skip (can't judge)</button>
<button type="button" class="undo"><kbd>u</kbd>Undo</button></div>
</section>
<section id="waiting" hidden>
<h1>Waiting for other raters…</h1>
<p class="muted">There is no question for you right now. This page asks again every few seconds.</p>
<div class="row"><button type="button" class="undo"><kbd>u</kbd>Undo my last answer</button></div>
</section>
<section id="done" hidden>
<h1>Thank you — the study is complete.</h1>
<p class="muted">Every answer is recorded. You may close this page.</p>
</section>
<p id="message" role="status" aria-live="polite"></p>
"""

SCRIPT = r"""
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("config").textContent);
  const STORE = "cbai-rater";
  const $ = (id) => document.getElementById(id);
  const views = ["ask-id", "question", "waiting", "done"];
  let rater = null, query = null, busy = false, timer = null, view = null;

  function show(name) {
    view = name;
    for (const id of views) $(id).hidden = id !== name;
    $("bar").hidden = !rater || name === "ask-id";
  }
  function say(text, error) {
    $("message").textContent = text || "";
    $("message").className = error ? "error" : "";
  }
  function setBusy(value) {
    busy = value;
    for (const button of document.querySelectorAll("#question button, .undo")) button.disabled = value;
  }
  function store(value) {
    try { if (value) localStorage.setItem(STORE, value); else localStorage.removeItem(STORE); } catch (e) { /* private mode */ }
  }
  function stored() {
    try { return localStorage.getItem(STORE); } catch (e) { return null; }
  }
  function newKey() {  // crypto.randomUUID needs https; getRandomValues does not
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // A lost connection is retried with the very same request (an answer keeps its key),
  // so the server records it once however often it is sent.
  async function call(method, path, body) {
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(path, {
          method, cache: "no-store",
          headers: {"Authorization": "Bearer " + config.token, "Content-Type": "application/json"},
          body: body === undefined ? undefined : JSON.stringify(body)});
        let data = {};
        try { data = await response.json(); } catch (e) { /* not JSON */ }
        if (attempt > 0) say("");
        return {status: response.status, data: data || {}};
      } catch (error) {
        if (attempt >= 40) { say("The server cannot be reached; reload the page to go on.", true); throw error; }
        say("The server does not answer; trying again…", true);
        await pause(Math.min(500 * 2 ** attempt, 5000));
      }
    }
  }

  async function next() {
    clearTimeout(timer);
    const r = await call("GET", "/api/next?rater=" + encodeURIComponent(rater));
    if (r.status === 400) { forget(); say(r.data.error, true); return; }
    if (r.status !== 200) { say(r.data.error || "error " + r.status, true); timer = setTimeout(next, 5000); return; }
    if (r.data.done) { query = null; show("done"); return; }
    if (!r.data.query) { query = null; show("waiting"); timer = setTimeout(next, config.poll * 1000); return; }
    present(r.data.query);
  }

  function present(q) {
    clearTimeout(timer);
    query = q;
    $("question").dataset.query = q.id;
    $("q-label").textContent = q.label;
    $("q-text").textContent = q.question;
    const holder = $("q-media");
    const source = q.media ? q.media + (q.media.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(config.token) : null;
    if (!source) holder.replaceChildren();
    else if (!holder.firstChild || holder.firstChild.dataset.source !== source) {
      // video and sound get the browser's own controls; anything else is shown as a picture
      const kind = (q.media_type || "").split("/")[0];
      const element = document.createElement(kind === "video" ? "video" : kind === "audio" ? "audio" : "img");
      if (kind === "video" || kind === "audio") element.controls = true;
      else element.alt = "picture of " + q.label;
      element.className = "media";
      element.src = source;
      element.dataset.source = source;
      holder.replaceChildren(element);
    }
    const box = $("q-answers");
    box.replaceChildren();
    q.answers.forEach((label, index) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "answer";
      if (index < 9) {
        const key = document.createElement("kbd");
        key.textContent = String(index + 1);
        button.append(key);
      }
      button.append(label);
      button.addEventListener("click", () => answer(label));
      box.append(button);
    });
    box.hidden = q.numbers;
    $("q-number").hidden = !q.numbers;
    show("question");
    setBusy(false);
    if (q.numbers) { $("q-value").value = ""; $("q-value").focus(); }
    else if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  }

  async function answer(given) {
    if (busy || !query) return;
    setBusy(true);
    const r = await call("POST", "/api/answer", {id: query.id, rater: rater, answer: given, key: newKey()});
    if (r.status === 200) {
      say(r.data.surplus ? "Recorded (this one was already covered; thank you)." : "Recorded.");
      if (r.data.done) { query = null; show("done"); return; }
      return next();
    }
    setBusy(false);
    say(r.data.error || "error " + r.status, true);
    if (r.status === 404) return next();
    if (query && query.numbers) $("q-value").focus();
  }

  async function skip() {
    if (busy || !query) return;
    setBusy(true);
    const r = await call("POST", "/api/skip", {id: query.id, rater: rater});
    if (r.status === 200) { say("Skipped."); return next(); }
    setBusy(false);
    say(r.data.error || "error " + r.status, true);
    if (r.status === 404) return next();
  }

  async function undo() {
    if (busy || !rater) return;
    setBusy(true);
    const r = await call("POST", "/api/undo", {rater: rater});
    setBusy(false);
    if (r.status === 200) {
      if (!r.data.query) return next();  // the study stopped meanwhile
      say("Taken back: answer it again.");
      present(r.data.query);
      return;
    }
    say(r.data.error || "error " + r.status, true);
  }

  function begin(id) {
    rater = id;
    $("rater-name").textContent = id;
    say("");
    next();
  }
  function forget() {
    clearTimeout(timer);
    store(null);
    rater = null;
    query = null;
    const params = new URLSearchParams(location.search);
    if (params.has("rater")) { params.delete("rater"); history.replaceState(null, "", "?" + params.toString()); }
    show("ask-id");
    $("rater-input").value = "";
    $("rater-input").focus();
  }

  $("id-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = $("rater-input").value.trim();
    if (!id) return;
    store(id);
    begin(id);
  });
  $("q-number").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("q-value").value.trim();
    if (text) answer(text);
  });
  $("skip").addEventListener("click", skip);
  for (const button of document.querySelectorAll(".undo")) button.addEventListener("click", undo);
  $("change").addEventListener("click", (event) => { event.preventDefault(); forget(); });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const inNumber = event.target === $("q-value");
    if (event.target.tagName === "INPUT" && !inNumber) return;  // typing one's rater id
    const key = event.key.toLowerCase();
    // no number is written with s or u, so those keys act even in the number field
    if (key === "u" && (view === "question" || view === "waiting")) { event.preventDefault(); undo(); return; }
    if (view !== "question") return;
    if (key === "s") { event.preventDefault(); skip(); return; }
    if (!inNumber && /^[1-9]$/.test(event.key)) {
      const button = $("q-answers").children[Number(event.key) - 1];
      if (button && !query.numbers) { event.preventDefault(); button.click(); }
    }
  });

  const fromLink = (new URLSearchParams(location.search).get("rater") || "").trim();
  if (fromLink) store(fromLink);
  const known = fromLink || (stored() || "").trim();
  if (known) begin(known); else show("ask-id");
})();
"""


def rater_page(token: str, poll_seconds: float, script_nonce: str, study_name: str) -> str:
    """The rater page's HTML, with the token and the polling period for its script."""
    config = {"token": token, "poll": poll_seconds}
    body = (BODY + f'<script type="application/json" id="config" nonce="{script_nonce}">'
            f"{json_for_script(config)}</script>")
    return document(f"{study_name} — cbai", body, script_nonce, script=SCRIPT)
