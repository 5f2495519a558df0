// The web table of `cbr serve`: plain JavaScript, no library, no build step.
// The server keeps the session and plays the bots; this page shows what it sends and
// sends the person's actions. The session id lives in this page only: the page ends its session
// when it goes away (a reload starts over).
"use strict";

const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const MAX_SEED = 2147483647;  // the server's seeds: 0 to 2**31 - 1
let session = null;     // the last view the server sent (null: no table)
let busy = false;       // a request is under way
let failed = 0;         // the HTTP status of the last request that failed (0: none answered)
let left = false;       // the page was hidden and its session ended (see pagehide)
let sortState = { key: "similarity", dir: -1 };
let lastCases = null;

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function fmt(x, digits) {
  if (x === null || x === undefined) return "\u2013";
  if (digits === undefined) return Number.isInteger(x) ? String(x) : x.toFixed(2);
  return x.toFixed(digits);
}

function signed(x, digits) {
  const s = fmt(x, digits);
  return x > 0 ? "+" + s : s;
}

function cardEl(text) {
  const rank = text[0] === "T" ? "10" : text[0];
  const suit = text[1];
  const red = suit === "h" || suit === "d";
  return el("span", { class: "card" + (red ? " red" : ""), title: text, "data-card": text },
            el("span", { text: rank }), el("span", { class: "suit", text: SUITS[suit] || suit }));
}

function cardsEl(cards, hidden) {
  const box = el("span", { class: "cards" });
  if (cards && cards.length) cards.forEach((c) => box.append(cardEl(c)));
  else if (hidden) for (let i = 0; i < 2; i++) box.append(el("span", { class: "card back", title: "hidden" }));
  return box;
}

function miniCards(text) {
  // "AdQc" or "3h4cJh" -> coloured suit symbols, monospace
  const span = el("span", { class: "mini" });
  if (!text) { span.textContent = "\u2013"; return span; }
  for (let i = 0; i + 1 < text.length; i += 2) {
    const s = text[i + 1];
    const part = el("span", { class: s === "h" || s === "d" ? "red" : "", text: text[i] + (SUITS[s] || s) });
    span.append(part);
  }
  return span;
}

function showError(message) {
  const box = $("error");
  if (!message) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = message;
}

// What a failed request says: the server's detail (each problem with its field), else the status
// in words, never a bare "(404)". Pure: tests/serve/test_static_js.py runs it.
function errorText(status, data, statusText) {
  const words = {400: "bad request", 401: "no token, or a wrong one", 403: "refused", 404: "not found",
                 409: "not now", 413: "request too large", 422: "bad input", 500: "internal error",
                 503: "busy or over the time limit"};
  let detail = data && data.detail;
  if (Array.isArray(detail)) detail = detail.map((d) => (d.loc ? d.loc.filter((x) => x !== "body").join(".") + ": " : "") + d.msg).join("; ");
  if (detail) return String(detail);
  return "the server answered " + status + " (" + (words[status] || statusText || "request failed") + ")";
}

async function api(method, path, body, headers) {
  const opts = { method, headers: Object.assign({}, headers || {}) };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const err = new Error(errorText(res.status, data, res.statusText));
    err.status = res.status;
    throw err;
  }
  return data;
}

function setBusy(on) {
  busy = on;
  document.body.classList.toggle("busy", on);
}

async function request(method, path, body, headers) {
  if (busy) return null;
  setBusy(true);
  try {
    const data = await api(method, path, body, headers);
    showError(null);
    return data;
  } catch (e) {
    failed = e.status || 0;
    showError(e.message);
    return null;
  } finally {
    setBusy(false);
  }
}

// ---- sessions and hands -----------------------------------------------------------------
function sessionForm() {
  // the new session's request from the form: { body, headers }, or a string saying why the
  // form is refused (then nothing is sent)
  const bots = $("bots").value.split(",").map((s) => s.trim()).filter((s) => s);
  if (bots.length > 5) return "Bots: at most 5 policy specs, separated by commas (" + bots.length + " given)";
  const body = { bots: bots.length ? bots : ["cbr"] };
  const seed = $("seed").value.trim();
  if (seed !== "") {
    if (!/^[0-9]+$/.test(seed) || Number(seed) > MAX_SEED) {
      return "Seed: a whole number from 0 to " + MAX_SEED + ", or empty for a random one (not \u201c" + seed + "\u201d)";
    }
    body.seed = Number(seed);
  }
  const retain = $("retain-into").value.trim();
  const headers = {};
  if (retain !== "") {
    body.retain_into = retain;
    const token = $("token").value.trim();
    if (token) headers.Authorization = "Bearer " + token;
  }
  return { body, headers };
}

async function leave(id) {
  // end a session on the server (best effort: it may have ended already)
  try { await api("DELETE", "/table/sessions/" + id); } catch (e) { /* gone already */ }
}

async function newSession(ev) {
  if (ev) ev.preventDefault();
  if (busy) return;
  const form = sessionForm();
  if (typeof form === "string") { showError(form); return; }
  // the new table first: a refused one leaves the old table as it was
  const old = session;
  let view = null;
  setBusy(true);
  try {
    try {
      view = await api("POST", "/table/sessions", form.body, form.headers);
    } catch (e) {
      if (e.status !== 409 || !old) throw e;
      // the server has all its sessions open: leave the old table to make room, then sit down again
      await leave(old.session);
      clearTable();
      view = await api("POST", "/table/sessions", form.body, form.headers);
    }
    if (old && session === old) await leave(old.session);
    showError(null);
  } catch (e) {
    showError(e.message);
  } finally {
    setBusy(false);
  }
  if (view) {
    closeCases();
    if (document.activeElement && document.activeElement.tagName === "INPUT") document.activeElement.blur();
    render(view);  // the keys play now (Enter in the Seed field left them typing into it)
    await newHand();
  }
}

async function play(path, body) {
  // the session's next view from the server; a session it no longer has (404: it expired, or
  // was left from elsewhere) is taken off the page, so no dead buttons stay
  const view = await request("POST", "/table/sessions/" + session.session + path, body);
  if (view) render(view);
  else if (failed === 404) clearTable();
}

async function newHand() {
  if (!session || (session.hand && !session.hand.over)) return;
  await play("/hand");
}

async function act(kind) {
  if (!session || !session.hand || !session.hand.your_turn) return;
  await play("/action", { action: kind });
}

// ---- drawing ----------------------------------------------------------------------------
function render(view) {
  session = view;
  window.cbrRenders = (window.cbrRenders || 0) + 1;  // for tests: a new view was drawn
  const hand = view.hand;
  $("deal").disabled = !!(hand && !hand.over);
  renderSeats(view);
  renderBoard(hand);
  renderActions(hand);
  renderHistory(hand);
  renderShowdown(view);
  renderResult(view);
  renderDecisions(hand);
  renderLogLinks(view);
  $("retention").textContent = view.retain_into
    ? "Retention on: " + countCases(view.retained) + " kept in " + view.retain_into + "." : "";
  if (view.error) showError("the hand stopped: " + view.error);
}

// "1 case", "2 cases": a count of cases in words
function countCases(n) {
  return n + (n === 1 ? " case" : " cases");
}

function clearTable() {
  // no session: an empty table, nothing to play or download (the error box is left as it is)
  session = null;
  closeCases();
  $("deal").disabled = true;
  renderSeats({ hand: null });
  renderBoard(null);
  renderActions(null);
  renderHistory(null);
  renderShowdown({ hand: null });
  renderDecisions(null);
  $("result").textContent = "No hand played yet.";
  drawPlot([]);
  renderLogLinks(null);
  $("retention").textContent = "";
}

function renderLogLinks(view) {
  // the session's logs, once a hand of it is over; before, the links lead nowhere
  const live = !!(view && view.result.hands > 0);
  for (const [id, f] of [["log-acpc", "acpc"], ["log-phh", "phh"]]) {
    const a = $(id);
    if (live) {
      a.setAttribute("href", "/table/sessions/" + view.session + "/log?format=" + f);
      a.setAttribute("download", "");
      a.removeAttribute("aria-disabled");
    } else {
      a.removeAttribute("href");
      a.removeAttribute("download");
      a.setAttribute("aria-disabled", "true");
    }
    a.classList.toggle("off", !live);
  }
}

const RANKS = "23456789TJQKA";

function cardsKey(text) {
  // "AhKd" -> its ranks, high to low, as a string that sorts as the ranks do ("A" > "K" > ... > "2")
  if (typeof text !== "string") return text;
  const ranks = (text.match(/[2-9TJQKA]/gi) || []).map((r) => RANKS.indexOf(r.toUpperCase()));
  return ranks.sort((p, q) => q - p).map((r) => String.fromCharCode(97 + r)).join("");
}

function renderSeats(view) {
  const box = $("seats");
  box.textContent = "";
  const hand = view.hand;
  if (!hand) return;
  const sb = view.small_bet;
  for (const s of [...hand.seats].sort((a, b) => a.seat - b.seat)) {  // each player keeps his seat; the button moves
    const cls = ["seat"];
    if (s.you) cls.push("you");
    if (s.to_act) cls.push("to-act");
    if (s.folded) cls.push("folded");
    const seat = el("div", { class: cls.join(" "), "data-seat": s.seat, id: "seat-" + s.seat },
      el("div", {}, el("span", { class: "name", text: s.name }), s.label ? el("span", { class: "label", text: s.label }) : null),
      cardsEl(s.cards, !s.folded),
      // this round's amount is what the history's "bets to 10" and the buttons' "Raise to 20" count
      el("div", { class: "bet", text: "this round " + fmt(s.street_bet) + " \u00b7 in the pot " + fmt(s.committed) +
                  " (" + fmt(s.committed / sb) + " sb)" + (s.folded ? ", folded" : "") }));
    seat.append(el("div", { class: "stack", text: (s.stack === null ? "session " + signed(s.session_chips) + " (" + signed(s.session_chips / sb) + " sb)"
                                                  : "stack " + fmt(s.stack) + " (" + fmt(s.stack / sb) + " sb)") }));
    if (s.hand_name) seat.append(el("div", { class: "hand-name", text: s.hand_name }));
    if (s.won !== null && s.won !== undefined) {
      // as cbr play --human says it: what the winner takes from the pot, and the net of the hand
      const text = s.won > 0 ? "wins " + fmt(s.won + s.committed) + " (net " + signed(s.won) + ", " + signed(s.won / sb) + " sb)"
                             : "net " + signed(s.won) + " (" + signed(s.won / sb) + " sb)";
      seat.append(el("div", { class: "won " + (s.won > 0 ? "plus" : s.won < 0 ? "minus" : ""), text }));
    }
    box.append(seat);
  }
}

function renderBoard(hand) {
  const board = $("board");
  board.textContent = "";
  (hand ? hand.board : []).forEach((c) => board.append(cardEl(c)));
  $("pot-line").hidden = !hand;  // no pot on an empty table
  $("pot").textContent = hand ? fmt(hand.pot) : "0";
  $("pot-sb").textContent = hand ? fmt(hand.pot_sb) : "0";
  let status = "";
  if (!hand) status = session ? "Press New hand (N) to deal." :
    "Choose your opponents (Bots) and press New session to sit down.";
  else if (hand.over) status = "Hand " + hand.number + " is over: press New hand (N).";
  else if (hand.your_turn) status = "Hand " + hand.number + ", " + hand.street + ": your turn" +
    (hand.to_call > 0 ? " (" + fmt(hand.to_call) + " to call)" : "");
  else status = "Hand " + hand.number + ": waiting";
  $("status").textContent = status;
  $("status").classList.toggle("cue", !hand);  // the first screen says what to do first
}

function renderActions(hand) {
  const box = $("actions");
  box.textContent = "";
  const legal = hand && hand.your_turn ? hand.legal : [];
  const keyOf = { f: "F", c: "C", r: "R" };
  for (const a of legal) {
    box.append(el("button", { type: "button", id: "act-" + a.kind, "data-kind": a.kind, onclick: () => act(a.kind) },
                  a.label + " ", el("kbd", { text: keyOf[a.kind] })));
  }
}

function renderHistory(hand) {
  const list = $("history");
  list.textContent = "";
  if (!hand) return;
  for (const street of hand.history) {
    const board = street.board.length ? " " : "";
    const li = el("li", { class: "street", "data-street": street.street }, street.street[0].toUpperCase() + street.street.slice(1) + board);
    if (street.board.length) li.append(miniCards(street.board.join("")));
    list.append(li);
    for (const a of street.actions) {
      list.append(el("li", { class: "act", "data-action": a.action, "data-seat": a.seat, text: a.text }));
    }
  }
}

function renderShowdown(view) {
  const box = $("showdown");
  box.textContent = "";
  const hand = view.hand;
  if (!hand || !hand.over || !hand.result) return;
  const r = hand.result;
  const you = hand.seats.find((s) => s.you);
  const parts = [];
  if (r.showdown.length > 1) {
    for (const seatNo of r.showdown) {
      const s = hand.seats.find((x) => x.seat === seatNo);
      parts.push(s.name + ": " + s.cards.join(" ") + (s.hand_name ? " (" + s.hand_name + ")" : ""));
    }
    box.append(el("div", { text: "Showdown: " + parts.join("; ") }));
  }
  box.append(el("div", { id: "hand-result", "data-sb": r.you_sb,
                         text: "Hand " + hand.number + ": " + you.name + " net " + signed(r.you) + " chips (" + signed(r.you_sb) + " sb)" }));
}

function renderResult(view) {
  const r = view.result;
  const box = $("result");
  box.textContent = "";
  if (!r.hands) {
    box.textContent = "No hand played yet.";
  } else {
    box.append(el("div", { class: "big", id: "result-total", "data-sb": r.sb, text: signed(r.sb) + " sb over " + r.hands + " hand" + (r.hands === 1 ? "" : "s") }),
               el("div", { id: "result-rate", text: signed(r.sb_per_hand, 3) + " sb/hand" + (r.ci95 === null ? " (95% CI needs 2 hands)" : " \u00b1 " + fmt(r.ci95, 3) + " (95% CI)") }),
               el("div", { class: "hint", text: "chips " + signed(r.chips) + "; seed " + view.seed + "; bots: " + view.bots.join(", ") }));
  }
  drawPlot(r.per_hand_sb);
}

function drawPlot(perHand) {
  const svg = $("plot");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const NS = "http://www.w3.org/2000/svg";
  const W = 320, H = 140, L = 34, R = 8, T = 8, B = 18;
  const cum = [0];
  for (const x of perHand) cum.push(cum[cum.length - 1] + x);
  let lo = Math.min(0, ...cum), hi = Math.max(0, ...cum);
  if (hi - lo < 1) { hi += 0.5; lo -= 0.5; }
  const hands = cum.length - 1;
  const n = Math.max(1, hands);  // the x scale; the label says how many hands there are (0 before any)
  const X = (i) => L + (W - L - R) * i / n;
  const Y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  add("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B });
  add("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B });
  add("line", { class: "zero", x1: L, y1: Y(0), x2: W - R, y2: Y(0) });
  add("text", { x: L - 4, y: Y(hi) + 4, "text-anchor": "end" }, fmt(hi, 1));
  add("text", { x: L - 4, y: Y(lo) + 4, "text-anchor": "end" }, fmt(lo, 1));
  add("text", { x: W - R, y: H - 4, "text-anchor": "end" }, hands + (hands === 1 ? " hand" : " hands"));
  add("text", { x: L + 4, y: H - 4 }, "cumulative sb");
  if (perHand.length) {
    add("polyline", { class: "line", id: "plot-line", points: cum.map((v, i) => X(i).toFixed(1) + "," + Y(v).toFixed(1)).join(" "),
                      "data-last": cum[cum.length - 1] });
  }
}

function renderDecisions(hand) {
  const list = $("decisions");
  list.textContent = "";
  if (!hand) return;
  for (const d of hand.decisions) {
    const words = { f: "fold", c: "check/call", r: "bet/raise" };
    const li = el("li", { "data-decision": d.id }, el("span", { text: d.name + ", " + d.street + ": " + words[d.action] }));
    if (d.explained) li.append(el("button", { type: "button", class: "why", "data-decision": d.id, onclick: () => openCases(d.id), text: "why?" }));
    if (d.played_by) li.append(el("span", { class: "played-by", title: d.why || "", text: " (played by " + d.played_by + ")" }));
    list.append(li);
  }
  if (!hand.decisions.length) list.append(el("li", { class: "hint", text: "none yet" }));
}

// ---- the cases panel --------------------------------------------------------------------
async function openCases(id) {
  const data = await request("GET", "/table/sessions/" + session.session + "/decisions/" + id + "?top=20");
  if (!data) return;
  lastCases = data;
  sortState = { key: "similarity", dir: -1 };
  const words = { f: "fold", c: "check/call", r: "bet/raise" };
  $("cases-title").textContent = "Hand " + data.hand + ", " + data.name + " on the " + data.street + ": " + words[data.action];
  const sum = $("cases-summary");
  sum.textContent = "";
  const tri = (t) => {
    const box = el("span", { class: "triple" });
    for (const [k, label] of [["fold", "fold"], ["check_call", "check/call"], ["bet_raise", "bet/raise"]]) {
      const bar = el("span", { class: "bar", title: fmt(t[k], 3) }, el("span", { style: "width:" + Math.round(100 * t[k]) + "%" }));
      box.append(el("span", { text: label + " " + fmt(t[k], 2) + " " }), bar);
    }
    return box;
  };
  sum.append(el("div", {}, el("b", { text: "Retrieved triple: " }), tri(data.triple)),
             el("div", {}, el("b", { text: "Played from: " }), tri(data.played), el("span", { class: "nowrap", text: "  re-use: " + data.reuse })),
             el("div", { class: "why", id: "cases-why", text: data.why }),
             el("div", { class: "hint", text: countCases(data.retrieved) + " retrieved from case base " + data.casebase +
                         (data.fallback ? " (none reached the threshold: the most similar were used)" : " at similarity \u2265 " + fmt(data.threshold, 2)) +
                         "; the " + data.cases.length + " most similar below." }));
  drawCases();
  $("cases-panel").hidden = false;
  window.cbrCasesShown = (window.cbrCasesShown || 0) + 1;
}

function caseColumns(data) {
  // the features by weight, heaviest first (those that tell the cases apart most)
  const feats = Object.keys(data.weights || {}).filter((f) => data.cases.some((c) => f in (c.local || {})))
    .sort((a, b) => (data.weights[b] || 0) - (data.weights[a] || 0));
  const cols = [
    { key: "similarity", label: "similarity", num: true, get: (c) => c.similarity },
    { key: "hole", label: "hole", get: (c) => c.hole, cards: true },
    { key: "board", label: "board", get: (c) => c.board, cards: true },
    { key: "betting", label: "betting", get: (c) => c.betting },
    { key: "action", label: "action", get: (c) => c.action },
    { key: "outcome", label: "outcome (sb)", num: true, get: (c) => c.outcome },
    { key: "source", label: "source", get: (c) => (c.source || "") + (c.hand_id ? " #" + c.hand_id : ""), cls: "src" },
  ];
  for (const f of feats) cols.push({ key: "f:" + f, label: f, sub: "weight " + fmt(data.weights[f], 0), num: true, sim: true, get: (c) => (c.local || {})[f] });
  return cols;
}

function drawCases() {
  const data = lastCases;
  const cols = caseColumns(data);
  const thead = $("cases-table").tHead;
  const tbody = $("cases-table").tBodies[0];
  thead.textContent = "";
  tbody.textContent = "";
  const row = el("tr");
  for (const c of cols) {
    const th = el("th", { "data-key": c.key, title: "sort by " + c.label,
                          onclick: () => { sortState = { key: c.key, dir: sortState.key === c.key ? -sortState.dir : (c.num ? -1 : 1) }; drawCases(); } });
    th.append(el("span", { text: c.label }));
    if (c.sub) th.append(el("br"), el("span", { class: "sub", text: c.sub }));
    if (sortState.key === c.key) th.classList.add(sortState.dir > 0 ? "sorted-asc" : "sorted-desc");
    row.append(th);
  }
  thead.append(row);
  const col = cols.find((c) => c.key === sortState.key) || cols[0];
  // cards sort by rank, highest first within a holding (as text, "AhKd" came after "9c8c")
  const key = col.cards ? cardsKey : (v) => v;
  const cases = data.cases.slice().sort((a, b) => {
    const x = key(col.get(a)), y = key(col.get(b));
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * sortState.dir;
  });
  for (const c of cases) {
    const tr = el("tr", { "data-case": c.id });
    for (const k of cols) {
      const v = k.get(c);
      const td = el("td", { class: (k.num ? "num" : "") + (k.sim ? " sim" : "") + (k.cls ? " " + k.cls : "") });
      if (k.cards) td.append(miniCards(v));
      else if (k.num) td.textContent = v === null || v === undefined ? "\u2013" : fmt(v, k.key === "outcome" ? 1 : 3);
      else td.textContent = v === null || v === undefined ? "\u2013" : String(v);
      if (k.sim && typeof v === "number") td.style.setProperty("--a", (0.05 + 0.4 * Math.max(0, Math.min(1, v))).toFixed(2));
      if (k.key === "source") td.title = String(v);
      tr.append(td);
    }
    tbody.append(tr);
  }
}

function closeCases() { $("cases-panel").hidden = true; }

// ---- keys -------------------------------------------------------------------------------
document.addEventListener("keydown", (ev) => {
  if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "TEXTAREA")) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const k = ev.key.toLowerCase();
  if (k === "escape") { closeCases(); return; }
  if (!$("cases-panel").hidden) return;  // the panel covers the table: no play behind it
  if (k === "n") { ev.preventDefault(); newHand(); return; }
  if (session && session.hand && session.hand.your_turn && session.hand.legal.some((a) => a.kind === k)) {
    ev.preventDefault();
    act(k);
  }
});

$("session-form").addEventListener("submit", newSession);
// a page that goes away (a reload, a closed tab, another address) ends its session, or it would
// hold one of the server's places until it expires; keepalive lets the request outlive the
// page. A DELETE needs no token (only the id, which this page alone knows).
window.addEventListener("pagehide", () => {
  if (!session) return;
  fetch("/table/sessions/" + session.session, { method: "DELETE", keepalive: true }).catch(() => {});
  left = true;
});
window.addEventListener("pageshow", (ev) => {
  // back from the browser's page cache: the session ended when the page was left
  if (!ev.persisted || !left) return;
  left = false;
  clearTable();
  showError("this table's session ended when the page was left: start a new session");
});
$("deal").addEventListener("click", newHand);
$("cases-close").addEventListener("click", closeCases);
drawPlot([]);
renderBoard(null);
fetch("/policies").then((r) => r.json()).then((d) => {
  const list = $("known-bots");
  for (const p of d.policies || []) list.append(el("option", { value: p.name }));
  $("bots").setAttribute("list", "known-bots");
}).catch(() => {});
