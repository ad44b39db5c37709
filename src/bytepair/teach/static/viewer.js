// The tokenizer viewer. Every ID comes from the server (bytepair's Tokenizer.encode) and every
// merge tree from bytepair.teach.provenance: this page only draws them.
"use strict";

const MAX_MODELS = 4;
const COLOURS = 6;
const state = {
  models: [], chosen: [], results: null, inFlight: false, again: false,
  typedAt: null, pieceHtml: new Map(),
};
// Drawing times, for benchmarks: ms from the keystroke (or the request of a tree) to the server's
// answer ("answered") and to the frame painted after the DOM was updated ("total").
window.viewerTimings = { tokens: [], tree: [] };

function timeUntilPainted(list, name, start, answered) {
  requestAnimationFrame(() => setTimeout(() => {
    const end = performance.now();
    list.push({ total: end - start, answered: answered - start });
    performance.measure(name, { start, end });
  }, 0));
}

const $ = (id) => document.getElementById(id);

async function api(action, payload) {
  const response = await fetch(`/api/viewer/${action}`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload),
  });
  let answer;
  try { answer = await response.json(); } catch (e) { answer = { error: `the server answered ${response.status}` }; }
  if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
  return answer;
}

function showError(message) { $("error").textContent = message || ""; }

// -- glyphs -------------------------------------------------------------------------------

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ESCAPES[c]);
// Characters that draw as nothing, or as something else: named by their code point.
const INVISIBLE = /[\u00a0\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]/;

function glyphs(text) {
  let out = "";
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (ch === " ") out += '<i class="ws">·</i>';
    else if (ch === "\n") out += '<i class="ws">↵</i>\n';
    else if (ch === "\t") out += '<i class="ws">→</i>';
    else if (ch === "\r") out += '<i class="ws">␍</i>';
    else if (c < 32) out += `<i class="ctl">${String.fromCodePoint(0x2400 + c)}</i>`;
    else if (c === 127) out += '<i class="ctl">␡</i>';
    else if (c >= 0x80 && c < 0xa0) out += `<i class="ctl">U+${c.toString(16).toUpperCase().padStart(4, "0")}</i>`;
    else if (INVISIBLE.test(ch)) out += `<i class="ctl">U+${c.toString(16).toUpperCase().padStart(4, "0")}</i>`;
    else out += escapeHtml(ch);
  }
  return out;
}

// A token's face: text with glyphs, hex for bytes that are not whole UTF-8, a special token boxed.
function face(piece) {
  const [text, kind] = piece;
  if (kind === "bytes") return `<b class="hex">${text}</b>`;
  if (kind === "special") return `<b class="special">${escapeHtml(text)}</b>`;
  return glyphs(text);
}

function pieceHtml(model, id, piece) {
  const key = `${model}\u0000${id}`;
  let html = state.pieceHtml.get(key);
  if (html === undefined) { html = face(piece); state.pieceHtml.set(key, html); }
  return html;
}

// -- models and text ----------------------------------------------------------------------

function drawModelPicker() {
  const box = $("models");
  box.innerHTML = state.models.map((m, i) =>
    `<label class="pick"><input type="checkbox" value="${escapeHtml(m.name)}" ${i === 0 ? "checked" : ""}>` +
    `<span>${escapeHtml(m.name)}</span> <small>${m.vocab_size.toLocaleString("en")} tokens` +
    `${m.superbpe_transition ? ", SuperBPE" : ""}</small></label>`).join("");
  box.addEventListener("change", (event) => {
    const picked = [...box.querySelectorAll("input:checked")].map((i) => i.value);
    if (picked.length > MAX_MODELS) {
      event.target.checked = false;
      showError(`Compare at most ${MAX_MODELS} models at once.`);
      return;
    }
    state.chosen = picked;
    encodeNow();
  });
  state.chosen = state.models.length ? [state.models[0].name] : [];
}

function onType() {
  state.typedAt = performance.now();
  encodeNow();
}

// One request at a time: typing during a request asks again once it is answered, so the
// newest text is always the next one sent and nothing queues up behind a slow answer.
async function encodeNow() {
  if (state.inFlight) { state.again = true; return; }
  const text = $("text").value;
  const models = state.chosen.slice();
  if (!models.length) { $("panels").innerHTML = ""; return; }
  state.inFlight = true;
  const typedAt = state.typedAt;
  try {
    const answer = await api("encode", { text, models, start: 0, limit: CHUNK });
    answer.request = { text, models };  // the next windows are asked for with the same
    const answered = performance.now();
    if (!state.again) {
      state.results = answer;
      drawPanels(answer);
      showError("");
      if (typedAt !== null) timeUntilPainted(window.viewerTimings.tokens, "tokens drawn", typedAt, answered);
    }
  } catch (error) {
    showError(error.message);
  } finally {
    state.inFlight = false;
    if (state.again) { state.again = false; encodeNow(); }
  }
}

function ratio(a, b) { return b ? (a / b).toFixed(2) : "–"; }

function drawPanels(answer) {
  const comparing = answer.results.length > 1;
  let html = comparing ? `<p class="legend-note"><span class="d-sample">underlined</span>: a token ` +
    `whose span of the text is not a token of every other model</p>` : "";
  for (const result of answer.results) {
    const n = result.tokens;
    html += `<article class="panel card" data-model="${escapeHtml(result.model)}">` +
      `<header><h2>${escapeHtml(result.model)}</h2><dl class="stats">` +
      `<dt>tokens</dt><dd class="count">${n.toLocaleString("en")}</dd>` +
      `<dt>bytes per token</dt><dd class="bpt">${ratio(answer.bytes, n)}</dd>` +
      `<dt>characters per token</dt><dd class="cpt">${ratio(answer.characters, n)}</dd>` +
      (comparing ? `<dt>differing tokens</dt><dd class="ndiff">${result.differing.toLocaleString("en")}</dd>` : "") +
      `</dl></header><div class="tokens"></div><p class="more" hidden></p>` +
      `<details class="idbox" open><summary>IDs</summary><div class="ids"></div></details></article>`;
  }
  const panels = $("panels");
  panels.innerHTML = html;
  panels.classList.toggle("comparing", comparing);
  const articles = panels.querySelectorAll(".panel");
  answer.results.forEach((result, k) => {
    const panel = articles[k];
    // The server sends a window of the tokens, not all of them: the panel keeps the IDs it
    // was sent so far (from the first), and asks for the next window as its lists are scrolled.
    Object.assign(panel, {
      model: result.model, index: k, total: result.tokens, request: answer.request,
      ids: result.ids.slice(), differs: comparing ? result.differs.slice() : null,
      pieces: Object.assign({}, result.pieces), drawn: 0, owed: 0, fetching: false, comparing,
    });
    drawMore(panel);
    for (const list of [panel.querySelector(".tokens"), panel.querySelector(".ids")]) {
      list.addEventListener("scroll", () => {
        if (list.scrollTop + list.clientHeight > list.scrollHeight - 300) drawMore(panel);
      });
    }
  });
}

// A long text is drawn CHUNK tokens at a time, the next chunk when a list is scrolled near its
// end: the browser lays out what can be seen, and typing stays quick at any length. The
// server is asked for FETCH tokens at a time, before the panel runs out of them.
const CHUNK = 500;
const FETCH = 2000;

function drawMore(panel) {
  if (panel.drawn >= panel.total) return;
  if (panel.drawn >= panel.ids.length) {  // drawn when the next window arrives
    panel.owed = Math.min(panel.owed + 1, 20);
    fetchMore(panel);
    return;
  }
  drawChunk(panel);
  if (panel.ids.length - panel.drawn < CHUNK) fetchMore(panel);
}

async function fetchMore(panel) {
  if (panel.fetching || panel.ids.length >= panel.total) return;
  panel.fetching = true;
  const start = panel.ids.length;
  let result;
  try {
    const answer = await api("encode", Object.assign({}, panel.request, { start, limit: FETCH }));
    result = answer.results[panel.index];
  } catch (error) {
    showError(error.message);
    panel.owed = 0;
    return;
  } finally {
    panel.fetching = false;
  }
  if (!panel.isConnected || result.start !== panel.ids.length) return;  // the text has changed
  for (let i = 0; i < result.ids.length; i++) {
    panel.ids.push(result.ids[i]);
    if (panel.differs) panel.differs.push(result.differs[i]);
  }
  Object.assign(panel.pieces, result.pieces);
  while (panel.owed > 0 && panel.drawn < panel.ids.length) { panel.owed -= 1; drawChunk(panel); }
  if (panel.owed > 0 || panel.ids.length - panel.drawn < CHUNK) fetchMore(panel);
}

function drawChunk(panel) {
  const ids = panel.ids, pieces = panel.pieces, differs = panel.differs;
  const start = panel.drawn, stop = Math.min(ids.length, start + CHUNK);
  if (start >= stop) return;
  const tokenParts = new Array(stop - start);
  const idParts = new Array(stop - start);
  const mark = panel.comparing;
  for (let i = start; i < stop; i++) {
    const id = ids[i];
    tokenParts[i - start] = `<span class="t c${i % COLOURS}${mark && differs[i] ? " d" : ""}">` +
      `${pieceHtml(panel.model, id, pieces[id])}</span>`;
    idParts[i - start] = `<span>${id}</span>`;
  }
  panel.querySelector(".tokens").insertAdjacentHTML("beforeend", tokenParts.join(""));
  panel.querySelector(".ids").insertAdjacentHTML("beforeend", (start ? ", " : "") + idParts.join(", "));
  panel.drawn = stop;
  const more = panel.querySelector(".more");
  more.hidden = stop === panel.total;
  more.textContent = `${stop.toLocaleString("en")} of ${panel.total.toLocaleString("en")} tokens drawn: scroll down for more`;
}

// Hover: a token and its ID light up together (the k-th child of each list).
let lit = [];
function light(event) {
  const span = event.target.closest(".tokens > span, .ids > span");
  for (const el of lit) el.classList.remove("hl");
  lit = [];
  if (!span) return;
  const list = span.parentElement;
  const index = Array.prototype.indexOf.call(list.children, span);
  const panel = span.closest(".panel");
  const pair = [panel.querySelector(".tokens").children[index], panel.querySelector(".ids").children[index]];
  for (const el of pair) if (el) { el.classList.add("hl"); lit.push(el); }
}

async function openTree(event) {
  const span = event.target.closest(".tokens > span, .ids > span");
  if (!span) return;
  const panel = span.closest(".panel");
  const index = Array.prototype.indexOf.call(span.parentElement.children, span);
  await showTree(panel.dataset.model, panel.ids[index]);
}

async function showTree(model, id) {
  const clicked = performance.now();
  try {
    const answer = await api("tree", { model, id });
    const answered = performance.now();
    drawTree(answer);
    showError("");
    timeUntilPainted(window.viewerTimings.tree, "tree drawn", clicked, answered);
  } catch (error) {
    showError(error.message);
  }
}

// -- the merge tree -------------------------------------------------------------------------

const fmt = (n) => (n === null || n === undefined ? "–" : n.toLocaleString("en"));

function nodeHtml(node) {
  const leaf = node.children.length === 0;
  const text = node.whole ? glyphs(node.text) : `<b class="hex">${node.text}</b>`;
  let facts;
  if (node.flags.includes("special")) facts = `<span class="fact">special token</span>`;
  else if (node.rank === null) facts = `<span class="fact">byte 0x${node.byte.toString(16).toUpperCase().padStart(2, "0")}</span>`;
  else {
    facts = `<span class="fact rank">rank <b>${fmt(node.rank)}</b></span>` +
      `<span class="fact count">count <b>${fmt(node.count)}</b></span>` +
      `<span class="fact repl">replacements <b>${fmt(node.replacements)}</b></span>` +
      (node.stage ? `<span class="fact stage">stage <b>${node.stage}</b></span>` : "");
  }
  // A flag that cannot be computed for this model is shown as unknown, not left out.
  const flags = node.flags.map((f) => `<span class="flag ${f}">${f}</span>`).join("") +
    (node.unknown || []).map((f) => `<span class="flag unknown" title="cannot be computed for this model">${f}: unknown</span>`).join("");
  const attrs = `data-id="${node.id}" data-rank="${node.rank ?? ""}" data-count="${node.count ?? ""}"` +
    ` data-replacements="${node.replacements ?? ""}" data-stage="${node.stage ?? ""}" data-flags="${node.flags.join(" ")}" data-unknown="${(node.unknown || []).join(" ")}"`;
  let html = `<li><div class="node${leaf ? " leaf" : ""}" ${attrs}><div class="head"><span class="face">${text}</span>` +
    `<span class="nid">#${node.id}</span>${flags}${leaf ? facts : ""}</div>` +
    `${leaf ? "" : `<div class="facts">${facts}</div>`}</div>`;
  if (!leaf) html += `<ul>${node.children.map(nodeHtml).join("")}</ul>`;
  return html + "</li>";
}

function leaves(node, out) {
  if (!node.children.length) out.push(node);
  else for (const child of node.children) leaves(child, out);
  return out;
}

function drawTree(answer) {
  const tree = answer.tree;
  const bytes = leaves(tree, []);
  $("tree-body").innerHTML =
    `<p class="tree-model">${escapeHtml(answer.model)}: token <b>#${tree.id}</b> ` +
    `<span class="face big">${tree.whole ? glyphs(tree.text) : `<b class="hex">${tree.text}</b>`}</span>` +
    (tree.rank !== null ? ` made by rule ${fmt(tree.rank)} from ${bytes.length} bytes` : "") + `</p>` +
    `<ul class="merge-tree">${nodeHtml(tree)}</ul>`;
  $("tree").hidden = false;
}

// -- curves (the numbers of bytepair evaluate --json) -----------------------------------

const LINE_COLOURS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#bf3989", "#6e7781"];
const DASHES = ["", "7 4", "2 3", "9 3 2 3", "4 4", "1 5"];

function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const step0 = span / count;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(+v.toFixed(6));
  return ticks;
}

function drawCurves(curves) {
  if (!curves || !curves.length) return;
  const models = [...new Set(curves.map((c) => c.model))];
  const samples = [...new Set(curves.map((c) => c.sample))];
  const sizes = [...new Set(curves.flatMap((c) => c.sizes))].sort((a, b) => a - b);
  const values = curves.flatMap((c) => c.bytes_per_token);
  const W = 760, H = 340, L = 56, R = 20, T = 14, B = 46;
  const xmin = sizes[0], xmax = sizes[sizes.length - 1];
  const yticks = niceTicks(Math.min(...values), Math.max(...values), 5);
  const ymin = Math.min(yticks[0], Math.min(...values)), ymax = Math.max(yticks[yticks.length - 1], Math.max(...values));
  const x = (v) => L + (xmax === xmin ? (W - L - R) / 2 : (v - xmin) / (xmax - xmin) * (W - L - R));
  const y = (v) => T + (1 - (v - ymin) / (ymax - ymin || 1)) * (H - T - B);
  // Ticks at the sizes evaluated; a label that would touch its neighbour is left out (the last
  // size, the full vocabulary, always keeps its label).
  const labelled = [];
  for (let i = sizes.length - 1; i >= 0; i--) {
    if (!labelled.length || x(labelled[labelled.length - 1]) - x(sizes[i]) >= 44) labelled.push(sizes[i]);
  }
  let svg = `<svg class="plot" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img">`;
  for (const t of yticks) svg += `<line class="grid" x1="${L}" x2="${W - R}" y1="${y(t)}" y2="${y(t)}"/><text class="tick" x="${L - 6}" y="${y(t) + 4}" text-anchor="end">${t}</text>`;
  for (const s of sizes) svg += `<line class="grid" x1="${x(s)}" x2="${x(s)}" y1="${T}" y2="${H - B}"/>`;
  for (const s of labelled) svg += `<text class="tick xtick" x="${x(s)}" y="${H - B + 16}" text-anchor="middle">${s.toLocaleString("en")}</text>`;
  svg += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>`;
  svg += `<text class="label" x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">vocabulary size</text>`;
  svg += `<text class="label" transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">bytes per token</text>`;
  // Models drawn first are drawn wider: a curve that lies on another (a smaller vocabulary of the
  // same training, equal up to its size) shows as a line inside a wider band, not hidden.
  const width = (m) => 2 + 2.5 * (models.length - 1 - models.indexOf(m));
  const drawOrder = [...curves].sort((a, b) => models.indexOf(a.model) - models.indexOf(b.model));
  for (const c of drawOrder) {
    const colour = LINE_COLOURS[models.indexOf(c.model) % LINE_COLOURS.length];
    const dash = DASHES[samples.indexOf(c.sample) % DASHES.length];
    const points = c.sizes.map((s, i) => `${x(s).toFixed(1)},${y(c.bytes_per_token[i]).toFixed(1)}`).join(" ");
    svg += `<polyline class="curve" data-model="${escapeHtml(c.model)}" data-sample="${escapeHtml(c.sample)}" points="${points}" stroke="${colour}" stroke-width="${width(c.model)}" stroke-dasharray="${dash}"/>`;
    if (c.sizes.length <= 40) for (let i = 0; i < c.sizes.length; i++) svg += `<circle cx="${x(c.sizes[i])}" cy="${y(c.bytes_per_token[i])}" r="${1.5 + width(c.model) / 2}" fill="${colour}"><title>${escapeHtml(c.model)} · ${escapeHtml(c.sample)}: ${c.sizes[i].toLocaleString("en")} tokens, ${c.bytes_per_token[i].toFixed(3)} bytes per token</title></circle>`;
  }
  svg += "</svg>";
  // The legend sits beside the plot, never over the data: colour = model, line style = sample.
  let legend = `<div class="legend"><h3>model</h3>` + models.map((m, i) =>
    `<div><svg width="28" height="10"><line x1="0" x2="28" y1="5" y2="5" stroke="${LINE_COLOURS[i % LINE_COLOURS.length]}" stroke-width="${Math.min(width(m), 9)}"/></svg> ${escapeHtml(m)}</div>`).join("");
  legend += `<h3>sample</h3>` + samples.map((s, i) =>
    `<div><svg width="28" height="10"><line x1="0" x2="28" y1="5" y2="5" stroke="#57606a" stroke-width="2" stroke-dasharray="${DASHES[i % DASHES.length]}"/></svg> ${escapeHtml(s)}</div>`).join("") + "</div>";
  $("curves-body").innerHTML = `<div class="plot-row">${svg}${legend}</div>`;
  $("curves").hidden = false;
}

// -- start ---------------------------------------------------------------------------------

async function start() {
  let info;
  try { info = await api("info", {}); } catch (error) { showError(error.message); return; }
  state.models = info.models;
  if (!state.models.length) { $("empty").hidden = false; }
  drawModelPicker();
  drawCurves(info.curves);
  const text = $("text");
  text.addEventListener("input", onType);
  const panels = $("panels");
  panels.addEventListener("mouseover", light);
  panels.addEventListener("click", openTree);
  $("close-tree").addEventListener("click", () => { $("tree").hidden = true; });
  if (!text.value) text.value = "Hello world! Tokenizers split text into pieces: ‘naïve’ café, 日本語, Привет.\n\tTabs and  spaces.";
  encodeNow();
  document.body.dataset.ready = "1";
}

start();
