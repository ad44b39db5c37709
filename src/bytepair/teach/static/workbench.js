// The merge workbench. Every rule, count and token comes from the server (bytepair's reference
// trainer, bytepair.learn.naive, through bytepair.teach.workbench): this page only draws them.
"use strict";

const SHOWN_ROWS = 400;   // words drawn; the rest are summed up in one line
const SHOWN_COMPARE = 150;
const state = {
  payload: null,   // the corpus as started: {corpus, mode, end_of_word}
  view: null,      // the server's last answer
  predicted: false,
  tableDrawn: false, // the pair table is drawn when it is first shown after each answer
  busy: false,
};
// Times of each action, for benchmarks: ms from the click to the server's answer ("answered") and
// to the frame painted after the DOM was updated ("total").
window.workbenchTimings = [];

const $ = (id) => document.getElementById(id);
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ESCAPES[c]);
const plural = (n, word) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "s"}`;

async function api(action, payload) {
  const response = await fetch(`/api/workbench/${action}`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload),
  });
  let answer;
  try { answer = await response.json(); } catch (e) { answer = {}; }
  if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
  return answer;
}

function showError(message) { $("error").textContent = message || ""; }

function timed(action, start, answered) {
  requestAnimationFrame(() => setTimeout(() => {
    const end = performance.now();
    window.workbenchTimings.push({ action, total: end - start, answered: answered - start });
    performance.measure(`workbench-${action}`, { start, end });
  }, 0));
}

// -- tokens -----------------------------------------------------------------------------

function tokenClass(text, view) {
  if (view && text === view.end_of_word) return "tok eow";
  if (/\\x[0-9a-f]{2}/.test(text)) return "tok hex";
  return "tok";
}

// One word's tokens as boxes; marks: {index: [class, title]}.
function tokensHtml(tokens, ids, view, marks) {
  let html = "";
  for (let i = 0; i < tokens.length; i++) {
    let cls = tokenClass(tokens[i], view);
    let title = ids ? `ID ${ids[i]}` : "";
    const mark = marks && marks[i];
    if (mark) { cls += ` ${mark[0]}`; title = mark[1] + (title ? ` · ${title}` : ""); }
    html += `<span class="${cls}"${ids ? ` data-id="${ids[i]}"` : ""}${title ? ` title="${esc(title)}"` : ""}>${esc(tokens[i])}</span>`;
  }
  return html || '<span class="muted">(empty)</span>';
}

function wordHead(row, view) {
  const text = row.text;
  const count = row.count > 1 ? `<span class="times">×${row.count.toLocaleString("en")}</span>` : "";
  return `<span class="wtext" title="${esc(text)}">${esc(text) || '<span class="muted">(empty)</span>'}</span>${count}`;
}

// -- the main view ----------------------------------------------------------------------

// A view sends each distinct word once (view.words) and, per row, which word it is (view.rows)
// and its count (view.counts).
function rowAt(view, i) {
  const word = view.words[view.rows[i]];
  return { text: word.text, tokens: word.tokens, ids: word.ids, new: word.new, count: view.counts[i] };
}

const NEW_MARK = ["new", "made by the last merge"];

function newMarks(word) {
  if (!word.new || !word.new.length) return null;
  const marks = {};
  for (const i of word.new) marks[i] = NEW_MARK;
  return marks;
}

// The words as drawn: one HTML string per row. A click redraws only the rows whose HTML changed
// (those the merge touched, and those it touched before), in place; a new corpus redraws all.
const drawn = { payload: null, rows: [] };

function drawWords(view) {
  const shown = Math.min(view.rows.length, SHOWN_ROWS);
  const wordHtml = new Array(view.words.length);  // each distinct word's tokens, made once
  const rows = new Array(shown);
  for (let i = 0; i < shown; i++) {
    const j = view.rows[i];
    if (wordHtml[j] === undefined) {
      const w = view.words[j];
      wordHtml[j] = tokensHtml(w.tokens, w.ids, view, newMarks(w));
    }
    const row = rowAt(view, i);
    rows[i] = `${wordHead(row, view)}<span class="tokens">${wordHtml[j]}</span>`;
  }
  const box = $("words");
  if (drawn.payload === state.payload && drawn.rows.length === shown && box.children.length >= shown) {
    for (let i = 0; i < shown; i++) {
      if (rows[i] !== drawn.rows[i]) box.children[i].innerHTML = rows[i];
    }
  } else {
    let html = "";
    for (let i = 0; i < shown; i++) html += `<div class="word" data-row="${i}">${rows[i]}</div>`;
    if (view.rows.length > SHOWN_ROWS) {
      html += `<p class="note">… and ${plural(view.rows.length - SHOWN_ROWS, "more row")} (not drawn).</p>`;
    }
    box.innerHTML = html;
  }
  drawn.payload = state.payload;
  drawn.rows = rows;
}

function render(view, action) {
  state.view = view;
  drawWords(view);
  $("merge-count").textContent = `after ${plural(view.merges, "merge")}`;
  const s = view.stats;
  const rowsText = view.mode === "bytes" ? plural(s.rows, "document")
    : view.mode === "counts" ? `${plural(s.rows, "line")}, ${plural(s.occurrences, "word")} in all`
      : plural(s.rows, "word");
  $("stats").textContent = `${rowsText}: ${plural(s.symbols, view.mode === "bytes" ? "byte" : "symbol")} ` +
    `at the start, ${plural(s.tokens, "token")} now.`;
  if (view.last && action !== "parse" && action !== "reset") {
    const r = view.last;
    $("last").innerHTML = `${action === "run" ? `Ran to rank ${r.rank}; last rule` : `Rank ${r.rank}`}: ` +
      `<span class="tok">${esc(r.left)}</span> + <span class="tok">${esc(r.right)}</span> → ` +
      `<span class="tok new">${esc(r.token)}</span> · counted ${r.count}, replaced ${r.replacements}` +
      (r.count !== r.replacements ? ' <span class="muted">(overlapping windows count twice but merge once)</span>' : "");
  } else {
    $("last").textContent = "";
  }
  renderHistory(view.history);
  // The table is hidden until the learner predicts: it is drawn when shown (reveal).
  $("table").querySelector("tbody").innerHTML = "";
  $("table-more").textContent = "";
  state.tableDrawn = false;
  const done = view.done;
  $("reset").disabled = false;
  if (done) $("last").innerHTML += ' <strong class="done">No adjacent pair is left: training ends here.</strong>';
  state.predicted = false;
  syncControls();
  $("table-wrap").hidden = true;
  $("verdict").textContent = "";
  $("predict").hidden = done;
  $("guess-left").value = "";
  $("guess-right").value = "";
}

// The rules as drawn: a click that learns one more rule appends one row.
const drawnHistory = { payload: null, rules: [] };

function historyRow(r) {
  return `<tr><td>${r.rank}</td><td><span class="tok">${esc(r.left)}</span> <span class="tok">${esc(r.right)}</span></td>` +
    `<td><span class="tok">${esc(r.token)}</span></td><td>${r.count}</td><td>${r.replacements}</td></tr>`;
}

function renderHistory(history) {
  const body = $("history").querySelector("tbody");
  const old = drawnHistory.rules;
  const same = (a, b) => a.rank === b.rank && a.left === b.left && a.right === b.right &&
    a.count === b.count && a.replacements === b.replacements;
  const extends_ = drawnHistory.payload === state.payload && old.length <= history.length &&
    (old.length === 0 || same(old[old.length - 1], history[old.length - 1]));
  if (extends_ && old.length === body.rows.length) {
    if (history.length > old.length) body.insertAdjacentHTML("beforeend", history.slice(old.length).map(historyRow).join(""));
  } else {
    body.innerHTML = history.map(historyRow).join("");
  }
  drawnHistory.payload = state.payload;
  drawnHistory.rules = history;
  $("history-empty").hidden = history.length > 0;
}

// The first rows of the pair table: the winner and its rivals. "Show all" draws the rest.
const SHOWN_PAIRS = 50;

// Byte mode orders ties by token ID, not by text: each token is shown with its ID.
const tokenId = (id) => (id === undefined ? "" : ` <span class="tid" title="token ID">${id}</span>`);

function pairRow(r, i, view) {
  const ids = r.ids || [];
  return `<tr class="${r.winner ? "winner" : ""}${r.tied ? " tied" : ""}"><td>${i + 1}</td>` +
    `<td><span class="${tokenClass(r.left, view)}">${esc(r.left)}</span>${tokenId(ids[0])}</td>` +
    `<td><span class="${tokenClass(r.right, view)}">${esc(r.right)}</span>${tokenId(ids[1])}</td><td>${r.count}</td>` +
    `<td>${r.winner ? '<span class="badge win">next merge</span>' : ""}${r.tied ? '<span class="badge tie">tie</span>' : ""}</td></tr>`;
}

// How ties are ordered, as the table says it: by token ID in byte mode, by text otherwise.
const TIE_ORDER = {
  bytes: "Count descending; equal counts by token ID (left ID, then right ID), not by text",
  text: "Count descending; equal counts in (left, right) order",
};

function renderTable(view, all) {
  $("table-order").textContent = TIE_ORDER[view.mode === "bytes" ? "bytes" : "text"];
  const body = $("table").querySelector("tbody");
  const shown = all ? view.table.length : Math.min(view.table.length, SHOWN_PAIRS);
  body.innerHTML = view.table.slice(0, shown).map((r, i) => pairRow(r, i, view)).join("");
  const more = $("table-more");
  more.textContent = "";
  if (shown < view.table.length) {
    more.innerHTML = `… and ${plural(view.pairs - shown, "more pair")} with smaller counts. ` +
      '<button type="button" class="link" id="table-all">show them</button>';
    $("table-all").addEventListener("click", () => renderTable(view, true));
  } else if (view.pairs > shown) {
    more.textContent = `… and ${plural(view.pairs - shown, "more pair")} with smaller counts.`;
  }
  state.tableDrawn = true;
}

function reveal() {
  state.predicted = true;
  syncControls();
  if (!state.tableDrawn && state.view) {
    const start = performance.now();
    renderTable(state.view);
    timed("table", start, start);
  }
  $("table-wrap").hidden = false;
}

function checkPrediction(event) {
  event.preventDefault();
  const view = state.view;
  if (!view || !view.winner) return;
  // Byte mode draws a space as ␣: a typed space (alone or inside a token) means the same.
  const typed = (id) => { const v = $(id).value; return (/^ +$/.test(v) ? v : v.trim()).replace(/ /g, "\u2423"); };
  const left = typed("guess-left");
  const right = typed("guess-right");
  if (!left || !right) { $("verdict").textContent = "Type both tokens of the pair you expect first."; return; }
  const w = view.winner;
  const tied = view.table.filter((r) => r.count === w.count);
  const mine = view.table.find((r) => r.left === left && r.right === right);
  let text;
  if (left === w.left && right === w.right) {
    text = `Right: ${w.left} + ${w.right} merges next (count ${w.count}).`;
  } else if (mine && mine.count === w.count) {
    text = `Close: ${left} + ${right} has the top count ${w.count} too, but the tie goes to ${w.left} + ${w.right}, ` +
      (view.mode === "bytes" ? `the pair with the smaller token IDs (${w.ids[0]}, ${w.ids[1]}; left ID first).`
        : "the smaller pair in (left, right) order.");
  } else if (mine) {
    text = `Not this time: ${left} + ${right} is counted ${mine.count}; ${w.left} + ${w.right} is counted ${w.count}.`;
  } else {
    text = `${left} + ${right} is not an adjacent pair in any word; ${w.left} + ${w.right} merges next (count ${w.count}).`;
  }
  if (tied.length > 1) text += ` ${tied.length} pairs share the count ${w.count}.`;
  $("verdict").textContent = text;
  $("verdict").className = "verdict " + (left === w.left && right === w.right ? "right" : "wrong");
  record(view, left, right);
  reveal();
}

// -- predict first, and the learner's notes (kept in this browser) ------------------------

const NOTES_KEY = "bytepair-workbench-notes";
const notes = { list: [], pending: null };  // pending: the note whose merge asks for an explanation

function loadNotes() {
  try { notes.list = JSON.parse(localStorage.getItem(NOTES_KEY)) || []; } catch (e) { notes.list = []; }
}

function saveNotes() {
  try { localStorage.setItem(NOTES_KEY, JSON.stringify(notes.list)); } catch (e) { /* kept for this visit */ }
}

const predictFirst = () => $("predict-first").checked;

// Apply and Run wait while training is done, or, predicting first, until a prediction is checked.
function syncControls() {
  const done = !state.view || state.view.done;
  const waiting = predictFirst() && !state.predicted && !done;
  $("apply").disabled = done || waiting;
  $("run").disabled = done || waiting;
  $("reveal").hidden = predictFirst();
  $("predict-needed").hidden = !waiting;
}

// A checked prediction is kept: the corpus, the merge it was for, the guess and the answer.
function record(view, left, right) {
  const w = view.winner;
  notes.list.push({ corpus: state.payload.corpus.slice(0, 80), mode: view.mode, merge: view.merges + 1,
    predicted: `${left} + ${right}`, winner: `${w.left} + ${w.right}`, count: w.count,
    right: left === w.left && right === w.right, explanation: "" });
  notes.pending = notes.list.length - 1;
  $("explain").hidden = true;
  saveNotes();
  drawNotes();
}

// After a merge predicted first, the page asks for the learner's explanation of it.
function askForExplanation(action) {
  const note = notes.list[notes.pending];
  const asked = predictFirst() && note && (action === "apply" || action === "run");
  $("explain").hidden = !asked;
  if (asked) {
    $("explanation").value = note.explanation;
    $("explain").dataset.note = notes.pending;
  }
}

function drawNotes() {
  $("notes").innerHTML = notes.list.map((n) => `<li data-right="${n.right}">Merge ${n.merge} of ` +
    `<code>${esc(n.corpus)}</code>: you predicted <strong>${esc(n.predicted)}</strong>; ` +
    (n.right ? "right" : `it was <strong>${esc(n.winner)}</strong>`) + ` (count ${n.count}).` +
    (n.explanation ? `<span class="said">${esc(n.explanation)}</span>` : "") + "</li>").join("");
  $("notes-empty").hidden = notes.list.length > 0;
}

function explain() {
  const note = notes.list[Number($("explain").dataset.note)];
  if (!note) return;
  note.explanation = $("explanation").value;
  saveNotes();
  drawNotes();
}

// -- actions ----------------------------------------------------------------------------

function inputs() {
  const mode = document.querySelector('input[name="mode"]:checked').value;
  return { corpus: $("corpus").value, mode, end_of_word: $("eow").checked };
}

async function act(action, extra) {
  if (state.busy) return;
  const payload = action === "parse" ? inputs() : state.payload;
  if (!payload) return;
  state.busy = true;
  const start = performance.now();
  try {
    const view = await api(action, Object.assign({}, payload, extra || {}));
    const answered = performance.now();
    showError("");
    if (action === "parse") state.payload = payload;
    render(view, action);
    askForExplanation(action);
    timed(action, start, answered);
    await refreshBeside();
  } catch (err) {
    showError(err.message);
  } finally {
    state.busy = false;
  }
}

async function refreshBeside() {
  if ($("variant").value) await showVariant();
  if (!$("learner").hidden) await showLearner();
}

// -- beside the reference: the variants and the learner's functions -----------------------

const MARKS = {
  missed: ["missed", "should have been merged: the rule applies to every occurrence"],
  reused: ["reused", "reuses an input token already consumed by the token before it"],
  crossing: ["crossing", "runs across a word boundary"],
};

function markMap(row) {
  const marks = {};
  for (const [kind, indexes] of Object.entries(row.marks || {})) {
    for (const i of indexes) marks[i] = MARKS[kind];
  }
  return marks;
}

// The comparison beside the reference: a broken variant's (who "broken") or the learner's
// functions' (who "yours"); its column and its rules are headed accordingly.
function compareHtml(answer, brokenTitle, who) {
  const ref = answer.reference;
  const broken = answer.broken;
  let html = "";
  if (answer.variant) html += `<p class="symptom"><strong>${esc(answer.variant.title)}:</strong> ${esc(answer.variant.symptom)}.</p>`;
  html += `<p class="summary ${answer.diverged_at === null ? "same" : "diverged"}" data-diverged="${answer.diverged_at === null ? "" : answer.diverged_at}">` +
    `${esc(answer.summary)}</p>`;
  html += `<div class="side-by-side"><div class="col-head">Correct (reference)</div><div class="col-head ${who === "yours" ? "mine-head" : "broken-head"}">${esc(brokenTitle)}</div>`;
  broken.rows.slice(0, SHOWN_COMPARE).forEach((row, i) => {
    const expected = rowAt(ref, row.of);
    html += `<div class="word ref">${wordHead(expected, ref)}<span class="tokens">${tokensHtml(expected.tokens, expected.ids, ref, null)}</span></div>`;
    html += `<div class="word brk${row.differs ? " differs" : ""}" data-row="${i}" data-differs="${row.differs}">` +
      `${row.differs ? '<span class="badge diff" title="differs from the reference">≠</span>' : ""}` +
      `<span class="tokens">${tokensHtml(row.tokens, row.ids, ref, markMap(row))}</span></div>`;
  });
  html += "</div>";
  if (broken.rows.length > SHOWN_COMPARE) html += `<p class="note">… and ${plural(broken.rows.length - SHOWN_COMPARE, "more row")}.</p>`;
  html += '<div class="legend">';
  for (const [kind, [cls, text]] of Object.entries(MARKS)) {
    if (broken.rows.some((r) => r.marks && r.marks[kind])) html += `<span><span class="tok ${cls}">x</span> ${esc(text)}</span>`;
  }
  html += "</div>";
  html += `<h3>Rules, rank by rank</h3><table class="history rules-compare"><thead><tr><th>rank</th><th>${who}</th><th>count</th><th>replaced</th><th>reference</th></tr></thead><tbody>`;
  broken.history.forEach((r, k) => {
    const e = r.expected || (k < ref.history.length ? ref.history[k] : null);
    html += `<tr class="${r.differs ? "differs" : ""}"><td>${r.rank}</td>` +
      `<td><span class="tok">${esc(r.left)}</span> <span class="tok">${esc(r.right)}</span></td><td>${r.count}</td><td>${r.replacements}</td>` +
      `<td>${e ? `${esc(e.left)} + ${esc(e.right)} · ${e.count} · ${e.replacements}` : '<span class="muted">none</span>'}</td></tr>`;
  });
  html += "</tbody></table>";
  // The counts are the broken part only for these two; the others count as the reference does.
  const name = answer.variant && answer.variant.name;
  if (broken.table && (name === "deduplicated" || name === "across-boundaries")) {
    html += `<h3>Its pair table now</h3><table class="pairs small"><thead><tr><th>left</th><th>right</th><th>counted</th><th>inside words</th><th></th></tr></thead><tbody>` +
      broken.table.slice(0, 12).map((r) => `<tr class="${r.count !== r.expected ? "differs" : ""}${r.winner ? " winner" : ""}">` +
        `<td><span class="tok">${esc(r.left)}</span></td><td><span class="tok">${esc(r.right)}</span></td><td>${r.count}</td><td>${r.expected}</td>` +
        `<td>${r.winner ? '<span class="badge win">its next merge</span>' : ""}${r.count !== r.expected ? '<span class="badge diff">wrong count</span>' : ""}</td></tr>`).join("") +
      "</tbody></table>";
  }
  if (answer.reordered) {
    html += "<h3>The same words in reverse order, same broken tie-break</h3><ol class=\"reordered\" start=\"0\">" +
      answer.reordered.map((r) => `<li class="${r.differs ? "differs" : ""}">${esc(r.left)} + ${esc(r.right)} (count ${r.count})${r.differs ? " ← another rule" : ""}</li>`).join("") + "</ol>";
  }
  return html;
}

// Answers beside the reference can arrive out of order (a click, then another variant chosen
// before the first answer came): only the answer to the latest request of each box is drawn.
const asked = { compare: 0, learner: 0 };

async function showVariant() {
  const name = $("variant").value;
  const box = $("compare");
  const ticket = ++asked.compare;
  if (!name || !state.view) { box.hidden = true; box.innerHTML = ""; return; }
  try {
    const answer = await api("variant", Object.assign({}, state.payload, { merges: state.view.merges, variant: name }));
    if (ticket !== asked.compare) return;
    box.innerHTML = compareHtml(answer, `Broken: ${answer.variant.title}`, "broken");
    box.dataset.variant = name;
  } catch (err) {
    if (ticket !== asked.compare) return;
    box.innerHTML = `<div class="error">${esc(err.message)}</div>`;
  }
  box.hidden = false;
}

async function showLearner() {
  const box = $("learner");
  const ticket = ++asked.learner;
  box.hidden = false;
  if (!state.view) { box.innerHTML = '<p class="note">Start a corpus first.</p>'; return; }
  try {
    const answer = await api("learner", Object.assign({}, state.payload, { merges: state.view.merges }));
    if (ticket !== asked.learner) return;
    box.innerHTML = compareHtml(answer, `Yours: ${answer.learner}`, "yours");
  } catch (err) {
    if (ticket !== asked.learner) return;
    box.innerHTML = `<div class="error">${esc(err.message)}</div>`;
  }
}

async function showOverlap() {
  try {
    const o = await api("overlap", {});
    const toks = (list, reused) => list.map((t, i) => `<span class="tok${reused && reused.includes(i) ? " reused" : ""}">${esc(t)}</span>`).join("");
    $("overlap").innerHTML =
      `<p>${toks(o.before)}: the pair <span class="tok">${esc(o.pair[0])}</span> + <span class="tok">${esc(o.pair[1])}</span> ` +
      `is counted <strong>${o.count}</strong> times (windows 0–1 and 1–2).</p>` +
      `<p>One left-to-right merge makes <strong>${o.replacements}</strong> replacement: ${toks(o.after)}. ` +
      "The middle token cannot be used twice.</p>" +
      `<p class="muted">Reusing it (broken) would make ${toks(o.overlapping.after, o.overlapping.reused)}: ` +
      `${o.before.length} input tokens become ${o.overlapping.after.length} merged tokens that spell ` +
      `${o.overlapping.after.join("").length} characters, because the middle token is used twice.</p>`;
  } catch (err) {
    $("overlap").textContent = err.message;
  }
}

async function showLimits() {
  try {
    const l = await api("limits", {});
    $("limits").textContent = `Limits: ${l.bytes.toLocaleString("en")} bytes of text, ` +
      `${l.rows.toLocaleString("en")} words (or lines), counts up to ${l.count.toLocaleString("en")}, ` +
      `${l.merges} merges.`;
  } catch (err) { /* the page works without the note */ }
}

function syncMode() {
  const mode = document.querySelector('input[name="mode"]:checked').value;
  $("eow").disabled = mode === "bytes";
  $("eow-label").classList.toggle("muted", mode === "bytes");
}

// -- wiring -----------------------------------------------------------------------------

$("start").addEventListener("click", () => act("parse"));
$("apply").addEventListener("click", () => act("apply", { merges: state.view.merges }));
$("run").addEventListener("click", () => act("run", { merges: state.view.merges, n: Number($("n").value) }));
$("reset").addEventListener("click", () => act("reset"));
$("predict").addEventListener("submit", checkPrediction);
$("reveal").addEventListener("click", reveal);
$("predict-first").addEventListener("change", () => {
  try { localStorage.setItem("bytepair-workbench-predict-first", predictFirst() ? "1" : ""); } catch (e) { /* this visit */ }
  syncControls();
});
$("explanation").addEventListener("input", explain);
$("notes-clear").addEventListener("click", () => {
  notes.list = []; notes.pending = null; $("explain").hidden = true; saveNotes(); drawNotes();
});
$("variant").addEventListener("change", showVariant);
$("mine").addEventListener("click", showLearner);
for (const input of document.querySelectorAll('input[name="mode"]')) input.addEventListener("change", syncMode);
for (const button of document.querySelectorAll("button.example")) {
  button.addEventListener("click", () => {
    document.querySelector(`input[name="mode"][value="${button.dataset.mode}"]`).checked = true;
    $("eow").checked = button.dataset.eow === "1";
    $("corpus").value = button.dataset.corpus;
    syncMode();
    act("parse");
  });
}
syncMode();
try { $("predict-first").checked = localStorage.getItem("bytepair-workbench-predict-first") === "1"; } catch (e) { /* off */ }
loadNotes();
drawNotes();
syncControls();
showLimits();
showOverlap();
act("parse");
