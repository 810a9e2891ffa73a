// The nard-rl web board: plain JavaScript over the server's JSON API (no build step).
// The human is player 0 and always sees the board from its own side: points 1..24 from
// its home, its checkers positive; board[25] its bar, board[0] minus the bot's bar.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const W = 50, TOP = 10, BOTTOM = 450, HEIGHT = 190, R = 20;
let S = null;            // the session state from the server
let work = null;         // the working board while the human moves (human's view)
let history = [];        // previous working boards (undo)
let selected = null;     // selected source point (25 = bar)
let shown = null;        // board drawn when no game is on (an analysed position)

const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["content-type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const data = r.status === 204 ? {} : await r.json();
  if (!r.ok) throw new Error(data.error || data.message || r.statusText);
  return data;
}

function setStatus(text, isError) {
  const el = $("status");
  el.textContent = text;
  el.className = isError ? "error" : "";
}

// ---- geometry ---------------------------------------------------------------------------
function column(p) {                     // 0..11 from the left, home board on the right
  return p <= 12 ? 12 - p : p - 13;
}
function colX(c) { return 20 + c * W + (c >= 6 ? W : 0); }
function mirror(x, w) { return $("home-left").checked ? 760 - x - w : x; }
function pointX(p) { return mirror(colX(column(p)), W); }
function isTop(p) { return p >= 13; }
const BAR_X = 320, TRAY_X = 690;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function stack(svg, x, top, n, cls, point) {
  const shownN = Math.min(Math.abs(n), 5);
  for (let i = 0; i < shownN; i++) {
    const cy = top ? TOP + R + i * 2 * R : BOTTOM - R - i * 2 * R;
    const c = el("circle", { cx: x + W / 2, cy, r: R - 1, class: cls }, svg);
    c.dataset.point = point;
  }
  if (Math.abs(n) > 5) {
    const cy = top ? TOP + R + 4 * 2 * R + 5 : BOTTOM - R - 4 * 2 * R + 5;
    const t = el("text", { x: x + W / 2, y: cy, class: "count " + cls.replace("checker", "count") }, svg);
    t.textContent = String(Math.abs(n));
  }
}

function draw() {
  const svg = $("board");
  svg.innerHTML = "";
  const board = work || (S ? S.board : shown);
  // points
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = isTop(p);
    const tip = top ? TOP + HEIGHT : BOTTOM - HEIGHT;
    const base = top ? TOP : BOTTOM;
    const tri = el("polygon", {
      points: `${x},${base} ${x + W},${base} ${x + W / 2},${tip}`,
      class: `point ${p % 2 ? "point-dark" : "point-light"}${selected === p ? " selected" : ""}`,
    }, svg);
    tri.dataset.point = p;
    const hit = el("rect", { x, y: top ? TOP : BOTTOM - HEIGHT - 20, width: W, height: HEIGHT + 20, fill: "transparent" }, svg);
    hit.dataset.point = p;
    const lab = el("text", { x: x + W / 2, y: top ? TOP + HEIGHT + 14 : BOTTOM - HEIGHT - 4, class: "label" }, svg);
    lab.textContent = String(p);
    if (board && board[p]) stack(svg, x, top, board[p], board[p] > 0 ? "checker-human" : "checker-bot", p);
  }
  // bar and trays
  const bx = mirror(BAR_X, W);
  const bar = el("rect", { x: bx, y: TOP, width: W, height: BOTTOM - TOP, class: "bar" + (selected === 25 ? " selected" : "") }, svg);
  bar.dataset.point = 25;
  const tx = mirror(TRAY_X, 60);
  el("rect", { x: tx, y: TOP, width: 60, height: HEIGHT, class: "tray" }, svg);
  const off = el("rect", { x: tx, y: BOTTOM - HEIGHT, width: 60, height: HEIGHT, class: "tray", id: "tray-off" }, svg);
  off.dataset.point = 0;
  if (board) {
    if (board[25] > 0) stack(svg, bx, false, board[25], "checker-human", 25);
    if (board[0] < 0) stack(svg, bx, true, board[0], "checker-bot", 25);
    const mine = 15 - board.slice(1, 26).filter((v) => v > 0).reduce((a, b) => a + b, 0);
    const theirs = 15 + board.slice(0, 25).filter((v) => v < 0).reduce((a, b) => a + b, 0);
    const t1 = el("text", { x: tx + 30, y: BOTTOM - 20, class: "label" }, svg);
    t1.textContent = `off ${mine}`;
    const t2 = el("text", { x: tx + 30, y: TOP + 20, class: "label" }, svg);
    t2.textContent = `off ${theirs}`;
  }
  // dice and cube
  if (S && S.dice) {
    S.dice.forEach((d, i) => {
      const x = mirror(520 + i * 45, 36);
      el("rect", { x, y: 212, width: 36, height: 36, rx: 6, class: "die" }, svg);
      const t = el("text", { x: x + 18, y: 238, class: "die-text" }, svg);
      t.textContent = String(d);
    });
  }
  if (S && S.rules === "standard") {
    const owner = S.cube.owner;
    const y = owner === "bot" ? 30 : owner === "human" ? 390 : 210;
    const x = mirror(TRAY_X + 12, 36);
    el("rect", { x, y, width: 36, height: 36, class: "cube-box", id: "cube" }, svg);
    const t = el("text", { x: x + 18, y: y + 25, class: "die-text" }, svg);
    t.textContent = String(S.cube.value === 1 ? 64 : S.cube.value);
  }
}

// ---- moving checkers ----------------------------------------------------------------------
function humanMoves() {
  return S && S.phase === "move" && S.to_act === "human" && S.legal_plays;
}

function same(a, b) { return a.length === b.length && a.every((v, i) => v === b[i]); }

function applyStep(board, from, to) {
  const b = board.slice();
  if (b[from] <= 0) throw new Error(`no checker of yours on ${from === 25 ? "the bar" : from}`);
  if (from !== 25 && b[25] > 0) throw new Error("enter from the bar first (R11)");
  if (to >= from) throw new Error("checkers move towards your home (lower points)");
  if (to > 0 && b[to] < -1) throw new Error(`point ${to} is blocked (R9)`);
  b[from] -= 1;
  if (to > 0) {
    if (b[to] === -1) { b[to] = 0; b[0] -= 1; }
    b[to] += 1;
  }
  return b;
}

function matchingPlay() {
  if (!humanMoves() || !work) return null;
  return S.legal_plays.find((p) => same(p.board, work)) || null;
}

function clickPoint(p) {
  if (!humanMoves()) return;
  if (selected === null) {
    if (p !== 0 && work[p] > 0) selected = p;
    draw();
    return;
  }
  if (p === selected) { selected = null; draw(); return; }
  try {
    const next = applyStep(work, selected, p);
    history.push(work);
    work = next;
    setStatus(matchingPlay() ? "A legal play: commit it, or keep changing it (R38)." : "Keep moving.");
  } catch (e) {
    setStatus(e.message, true);
  }
  selected = null;
  refreshButtons();
  draw();
}

let dragFrom = null;
function pointOf(target) {
  const v = target && target.dataset ? target.dataset.point : undefined;
  return v === undefined ? null : Number(v);
}

function bindBoard() {
  const svg = $("board");
  svg.addEventListener("pointerdown", (ev) => {
    const p = pointOf(ev.target);
    if (p !== null && humanMoves() && p !== 0 && work[p] > 0 && selected === null) dragFrom = p;
  });
  svg.addEventListener("pointerup", (ev) => {
    const p = pointOf(document.elementFromPoint(ev.clientX, ev.clientY));
    if (dragFrom !== null && p !== null && p !== dragFrom) {
      selected = dragFrom;
      dragFrom = null;
      clickPoint(p);
      return;
    }
    dragFrom = null;
    if (p !== null) clickPoint(p);
  });
}

// ---- the session ----------------------------------------------------------------------------
function describe() {
  if (!S) return "";
  if (S.result) {
    const r = S.result;
    const who = r.winner === "human" ? "You win" : "The bot wins";
    return `${who} ${r.points} point${r.points === 1 ? "" : "s"} (${r.kind}, ${r.reason}).` +
      (S.match_over ? " The match is over." : S.match_length ? " Next game when you are ready." : "");
  }
  if (S.to_act !== "human") return "The bot is thinking...";
  switch (S.phase) {
    case "opening": return "Roll for the opening (R5).";
    case "roll_or_double": return S.can_double ? "Roll or double." : "Your roll.";
    case "take_or_drop": return `The bot doubles to ${S.cube.value * 2}: take or pass?`;
    case "move": return `You rolled ${S.dice[0]}-${S.dice[1]}: move checkers (click or drag), or pick a play.`;
    case "resign_pending": return "A resignation is pending.";
    default: return S.phase;
  }
}

function refreshButtons() {
  const me = S && S.to_act === "human" && !S.result;
  $("btn-roll").disabled = !(me && (S.phase === "opening" || S.phase === "roll_or_double"));
  $("btn-double").disabled = !(me && S.can_double);
  $("btn-take").disabled = !(me && S.phase === "take_or_drop");
  $("btn-pass").disabled = !(me && S.phase === "take_or_drop");
  $("btn-resign").disabled = !(me && (S.phase === "roll_or_double" || S.phase === "move"));
  $("btn-undo").disabled = !(humanMoves() && history.length);
  $("btn-commit").disabled = !matchingPlay();
  $("btn-next").disabled = !(S && S.result && !S.match_over);
  $("btn-hint").disabled = !(me && (S.phase === "move" || S.phase === "roll_or_double"));
}

function render(state) {
  S = state;
  work = humanMoves() ? S.board.slice() : null;
  if (humanMoves() && S.pending) work = S.pending.board.slice();
  history = [];
  selected = null;
  setStatus(describe());
  const plays = $("plays");
  plays.innerHTML = "";
  (humanMoves() ? S.legal_plays : []).forEach((p, i) => {
    const li = document.createElement("li");
    li.textContent = p.move || "(no move)";
    li.dataset.index = i;
    li.addEventListener("click", () => {
      history.push(work);
      work = p.board.slice();
      [...plays.children].forEach((c) => c.classList.remove("chosen"));
      li.classList.add("chosen");
      setStatus("A legal play: commit it, or keep changing it (R38).");
      refreshButtons();
      draw();
    });
    plays.appendChild(li);
  });
  const log = $("log");
  log.innerHTML = "";
  for (const line of S.log) {
    const li = document.createElement("li");
    li.textContent = line;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  $("score").textContent = S.match_length
    ? `Match to ${S.match_length}: you ${S.score[0]}, bot ${S.score[1]}${S.crawford ? " (Crawford game)" : ""}`
    : `Money game ${S.game_number}: you ${S.score[0]}, bot ${S.score[1]}`;
  refreshButtons();
  draw();
}

async function act(path, body) {
  try {
    render(await api("POST", `/v1/games/${S.id}/${path}`, body));
  } catch (e) {
    setStatus(e.message, true);
  }
}

async function newGame(ev) {
  ev.preventDefault();
  const body = {
    rules: $("rules").value,
    match_length: Number($("match-length").value || 0),
    first: $("first").value,
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    render(await api("POST", "/v1/games", body));
  } catch (e) {
    setStatus(e.message, true);
  }
}

// ---- analysis -------------------------------------------------------------------------------
function fmt(v) { return v === null || v === undefined ? "-" : (v >= 0 ? "+" : "") + v.toFixed(3); }

function showAnalysis(res) {
  const body = $("analysis-body");
  if (res.plays) {
    const rows = res.plays.slice(0, 12).map((p, i) =>
      `<tr><td>${i + 1}. ${p.move || "(no move)"}</td><td>${fmt(p.equity)}</td><td>${fmt(p.diff)}</td>` +
      `<td>${p.probs.win.toFixed(3)}</td><td>${p.probs.win_gammon.toFixed(3)}</td><td>${p.probs.lose_gammon.toFixed(3)}</td></tr>`);
    body.innerHTML = `<div>${res.position_id} ${res.dice.join("-")} (${res.equity}, ${res.ply}-ply)</div>` +
      `<table id="hint-table"><tr><th>play</th><th>equity</th><th>diff</th><th>win</th><th>gam</th><th>lgam</th></tr>${rows.join("")}</table>` +
      (res.plays.length ? "" : "<div>No legal play: the roll is forfeited (R16).</div>");
  } else if (res.cube) {
    const c = res.cube;
    body.innerHTML = `<div>${res.position_id}: cube analysis (${c.ply}-ply)</div>` +
      `<table id="cube-table"><tr><td>No double</td><td>${fmt(c.no_double)}</td></tr>` +
      `<tr><td>Double, take</td><td>${fmt(c.double_take)}</td></tr>` +
      `<tr><td>Double, pass</td><td>${fmt(c.double_pass)}</td></tr>` +
      `<tr><td>Proper action</td><td id="cube-decision">${c.decision}</td></tr>` +
      `<tr><td>Win / gammon</td><td>${c.probs.win.toFixed(3)} / ${c.probs.win_gammon.toFixed(3)}</td></tr></table>`;
  }
}

function gameRequest() {
  const req = { board: S.board, rules: S.rules };
  if (S.rules === "standard") {
    const owner = { centered: "centered", human: "mover", bot: "opponent" }[S.cube.owner];
    req.cube = { value: S.cube.value, owner };
  }
  if (S.match_length) req.match = { length: S.match_length, score: S.score, crawford: S.crawford };
  if (S.phase === "move") req.dice = S.dice;
  return req;
}

async function hint() {
  try {
    showAnalysis(await api("POST", "/v1/hint", gameRequest()));
  } catch (e) {
    $("analysis-body").textContent = e.message;
  }
}

async function analyse() {
  const text = $("pos-text").value.trim();
  const req = { rules: $("analyse-rules").value, ply: Number($("analyse-ply").value) };
  if (/^xgid=/i.test(text)) req.xgid = text;
  else if (text.includes(":")) req.gnubg_id = text;
  else req.position_id = text;
  const digits = $("dice-text").value.replace(/[^1-6]/g, "");
  if (digits.length === 2) req.dice = [Number(digits[0]), Number(digits[1])];
  try {
    const res = await api("POST", "/v1/hint", req);
    showAnalysis(res);
    if (res.board && (!S || S.result)) { S = null; shown = res.board; draw(); }
  } catch (e) {
    $("analysis-body").innerHTML = `<span class="error">${e.message.replace(/</g, "&lt;")}</span>`;
  }
}

// ---- wiring ---------------------------------------------------------------------------------
function init() {
  $("new-game").addEventListener("submit", newGame);
  $("btn-roll").addEventListener("click", () => act("roll"));
  $("btn-double").addEventListener("click", () => act("double"));
  $("btn-take").addEventListener("click", () => act("take"));
  $("btn-pass").addEventListener("click", () => act("pass"));
  $("btn-next").addEventListener("click", () => act("next"));
  $("btn-resign").addEventListener("click", () => act("resign", { kind: $("resign-kind").value }));
  $("btn-commit").addEventListener("click", () => { const p = matchingPlay(); if (p) act("move", { board: p.board }); });
  $("btn-undo").addEventListener("click", () => { work = history.pop() || work; selected = null; refreshButtons(); draw(); });
  $("btn-hint").addEventListener("click", hint);
  $("btn-analyse").addEventListener("click", analyse);
  $("home-left").addEventListener("change", draw);
  bindBoard();
  draw();
}

window.nard = { state: () => S, working: () => work };
init();
