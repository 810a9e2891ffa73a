// The nard-rl web board: plain JavaScript over the server's JSON API (no build step).
// The human is player 0 and always sees the board from its own side: points 1..24 from
// its home, its checkers positive; board[25] its bar, board[0] minus the bot's bar.
//
// What a player expects of a board, and where it is drawn: the pip counts (in the bar,
// and beside the score), each side's dice on its own half (the bot's last roll stays on
// its half until the human rolls), the bot's last play outlined on the points it touched,
// the cube in the tray column (top: the bot owns it, bottom: you, middle: centered), both
// clocks of the mars rules (R30) counting down between the server's answers, and a hint
// panel that always speaks of the decision at hand: the ranked plays after a roll, the
// cube analysis before one, take or pass at the bot's double.  Point numbers sit in their
// own strips above and below the board, so no die, cube or checker ever hides them.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const W = 50, TOP = 20, BOTTOM = 480, HEIGHT = 190, R = 20, DIE = 36;
const MIDDLE = (TOP + BOTTOM) / 2;
let S = null;            // the session state from the server
let received = 0;        // performance.now() when S arrived (the clocks count from it)
let work = null;         // the working board while the human moves (human's view)
let history = [];        // previous working boards (undo)
let selected = null;     // selected source point (25 = bar)
let shown = null;        // board drawn when no game is on (an analysed position)
let hintKey = null;      // the decision the hint panel speaks of
let poll = null;         // timer that asks the server for the state during a timed turn

const $ = (id) => document.getElementById(id);

// Readable names for the server's identifiers.
const LABELS = {
  money_equity: "money equity",
  match_winning_chance: "match-winning chance",
  no_double: "No double",
  double_take: "Double, take",
  double_pass: "Double, pass",
  too_good: "Too good to double",
  unavailable: "Doubling not available",
  bear_off: "all checkers borne off",
  drop: "double passed",
  resign: "resignation",
  timeout: "on time (R30)",
  single: "a single game",
  gammon: "a gammon",
  backgammon: "a backgammon",
};
function label(id) { return LABELS[id] || String(id).replace(/_/g, " "); }
function resultKind(kind) {
  if (S && S.rules === "mars" && kind === "gammon") return "a mars";  // R28
  return label(kind);
}

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
const BAR_X = 320, TRAY_X = 690, TRAY_W = 60;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function text(parent, x, y, cls, content, id) {
  const t = el("text", { x, y, class: cls }, parent);
  if (id) t.id = id;
  t.textContent = content;
  return t;
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
    text(svg, x + W / 2, cy, "count " + cls.replace("checker", "count"), String(Math.abs(n)));
  }
}

// pip layouts of a die, as fractions of its side
const DOTS = {
  1: [[0.5, 0.5]],
  2: [[0.25, 0.25], [0.75, 0.75]],
  3: [[0.25, 0.25], [0.5, 0.5], [0.75, 0.75]],
  4: [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]],
  5: [[0.25, 0.25], [0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0.75, 0.75]],
  6: [[0.25, 0.25], [0.75, 0.25], [0.25, 0.5], [0.75, 0.5], [0.25, 0.75], [0.75, 0.75]],
};

function die(svg, x, y, value, who, extra) {
  const g = el("g", { class: `die-group die-group-${who}`, "data-value": value, "pointer-events": "none" }, svg);
  el("rect", { x, y, width: DIE, height: DIE, rx: 6, class: `die die-${who}${extra ? " " + extra : ""}` }, g);
  for (const [fx, fy] of DOTS[value]) {
    el("circle", { cx: x + fx * DIE, cy: y + fy * DIE, r: 3.6, class: `pip-${who}` }, g);
  }
  return g;
}

// the human's dice on the right half, the bot's on the left (mirrored with the board)
function drawDice(svg, dice, who, caption, extra) {
  const half = who === "human" ? 520 : 140;
  dice.forEach((d, i) => die(svg, mirror(half + i * (DIE + 10), DIE), MIDDLE - DIE / 2, d, who, extra));
  if (caption) text(svg, mirror(half + DIE + 5, 0), MIDDLE + DIE / 2 + 12, "die-caption", caption);
}

function pipCounts(board) {
  let human = 0, bot = 0;
  for (let p = 1; p <= 25; p++) if (board[p] > 0) human += board[p] * p;
  for (let p = 0; p <= 24; p++) if (board[p] < 0) bot += -board[p] * (p === 0 ? 25 : 25 - p);
  return { human, bot };
}

// the bot's last play, when the human is to decide after it (its steps in the bot's
// numbering: 25 its bar, 0 off); points in the human's numbering, "bar" and "off"
function botLast() {
  if (!S || !S.last_move || S.last_move.by !== "bot") return null;
  if (S.to_act !== "human" && !S.result) return null;
  if (S.phase === "move" && S.on_roll === "human") return null;  // the human has rolled since
  return S.last_move;
}
function humanPoint(botPoint) {
  if (botPoint === 25) return "bar";
  if (botPoint === 0) return "off";
  return 25 - botPoint;
}
function lastTouched() {
  const last = botLast();
  const from = new Set(), to = new Set();
  if (last) for (const [a, b] of last.steps) { from.add(humanPoint(a)); to.add(humanPoint(b)); }
  return { from, to };
}

function draw() {
  const svg = $("board");
  svg.innerHTML = "";
  const board = work || (S ? S.board : shown);
  const touched = lastTouched();
  el("rect", { x: 10, y: TOP, width: 670, height: BOTTOM - TOP, class: "felt" }, svg);
  // points, their numbers in the strips above and below the board
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = isTop(p);
    const tip = top ? TOP + HEIGHT : BOTTOM - HEIGHT;
    const base = top ? TOP : BOTTOM;
    let cls = `point ${p % 2 ? "point-dark" : "point-light"}`;
    if (selected === p) cls += " selected";
    if (touched.to.has(p)) cls += " last-to";
    else if (touched.from.has(p)) cls += " last-from";
    const tri = el("polygon", { points: `${x},${base} ${x + W},${base} ${x + W / 2},${tip}`, class: cls }, svg);
    tri.dataset.point = p;
    const hit = el("rect", { x, y: top ? TOP : BOTTOM - HEIGHT - 20, width: W, height: HEIGHT + 20, fill: "transparent" }, svg);
    hit.dataset.point = p;
    text(svg, x + W / 2, top ? TOP - 5 : BOTTOM + 15, "label point-label", String(p));
    if (board && board[p]) stack(svg, x, top, board[p], board[p] > 0 ? "checker-human" : "checker-bot", p);
  }
  // bar and trays
  const bx = mirror(BAR_X, W);
  const bar = el("rect", { x: bx, y: TOP, width: W, height: BOTTOM - TOP, class: "bar" + (selected === 25 ? " selected" : "") }, svg);
  bar.dataset.point = 25;
  if (touched.from.has("bar")) el("rect", { x: bx + 2, y: TOP + 2, width: W - 4, height: HEIGHT, class: "mark-last" }, svg);
  const tx = mirror(TRAY_X, TRAY_W);
  el("rect", { x: tx, y: TOP, width: TRAY_W, height: HEIGHT, class: "tray" }, svg);
  const off = el("rect", { x: tx, y: BOTTOM - HEIGHT, width: TRAY_W, height: HEIGHT, class: "tray", id: "tray-off" }, svg);
  off.dataset.point = 0;
  if (touched.to.has("off")) el("rect", { x: tx + 2, y: TOP + 2, width: TRAY_W - 4, height: HEIGHT - 4, class: "mark-last" }, svg);
  if (board) {
    if (board[25] > 0) stack(svg, bx, false, board[25], "checker-human", 25);
    if (board[0] < 0) stack(svg, bx, true, board[0], "checker-bot", 25);
    const mine = 15 - board.slice(1, 26).filter((v) => v > 0).reduce((a, b) => a + b, 0);
    const theirs = 15 + board.slice(0, 25).filter((v) => v < 0).reduce((a, b) => a + b, 0);
    text(svg, tx + TRAY_W / 2, BOTTOM - HEIGHT + 16, "label", `off ${mine}`, "off-human");
    text(svg, tx + TRAY_W / 2, TOP + HEIGHT - 8, "label", `off ${theirs}`, "off-bot");
    // pip counts in the bar, each side's next to its own half
    const pips = pipCounts(board);
    text(svg, bx + W / 2, MIDDLE - 24, "pips", String(pips.bot), "pips-bot");
    text(svg, bx + W / 2, MIDDLE + 4, "label", "pips");
    text(svg, bx + W / 2, MIDDLE + 32, "pips", String(pips.human), "pips-human");
  }
  // dice: the roll to play, or the bot's last roll on its own half
  if (S && S.dice && S.phase === "move") drawDice(svg, S.dice, S.on_roll, S.on_roll === "bot" ? "bot" : null);
  const last = botLast();
  if (S && last && !(S.dice && S.phase === "move")) {
    drawDice(svg, last.dice, "bot", last.move ? "bot's last roll" : "bot could not move", "last");
  }
  // the cube (standard rules only, R28): top when the bot owns it, bottom for you
  if (S && S.rules === "standard") {
    const owner = S.cube.owner;
    const y = owner === "bot" ? TOP + 6 : owner === "human" ? BOTTOM - 6 - DIE : MIDDLE - DIE / 2;
    const x = mirror(TRAY_X + (TRAY_W - DIE) / 2, DIE);
    el("rect", { x, y, width: DIE, height: DIE, rx: 4, class: "cube-box", id: "cube" }, svg);
    const offered = S.phase === "take_or_drop" ? S.cube.value * 2 : null;
    text(svg, x + DIE / 2, y + 25, "cube-text", String(offered || (S.cube.value === 1 ? 64 : S.cube.value)), "cube-value");
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

function workStatus() {
  if (matchingPlay()) return "A legal play: commit it, or keep changing it (R38).";
  if (history.length) return `Keep moving (${S.dice[0]}-${S.dice[1]}).`;
  return describe();
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
    setStatus(workStatus());
  } catch (e) {
    setStatus(e.message, true);
  }
  selected = null;
  refreshButtons();
  draw();
}

function undo() {
  if (!history.length) return;
  work = history.pop();
  selected = null;
  [...$("plays").children].forEach((c) => c.classList.remove("chosen"));
  const left = history.length;
  setStatus(left ? `Took back a step. ${workStatus()}` : `Took back your play. ${describe()}`);
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
function lastMoveText() {
  const last = botLast();
  if (!last) return "";
  const [a, b] = last.dice;
  return last.move ? `The bot rolled ${a}-${b} and played ${last.move}.` : `The bot rolled ${a}-${b} and could not move (R16).`;
}

function describe() {
  if (!S) return "";
  if (S.result) {
    const r = S.result;
    const who = r.winner === "human" ? "You win" : "The bot wins";
    const then = S.match_over ? " The match is over: play again?" : " Next game, or play again.";
    return `${who} ${r.points} point${r.points === 1 ? "" : "s"} (${resultKind(r.kind)}, ${label(r.reason)}).${then}`;
  }
  if (S.to_act !== "human") return "The bot is thinking...";
  const before = lastMoveText();
  const prefix = before ? before + " " : "";
  switch (S.phase) {
    case "opening": return "Roll for the opening (R5).";
    case "roll_or_double": return prefix + (S.can_double ? "Roll or double." : "Your roll.");
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
  $("btn-again").hidden = !(S && S.result);
  $("btn-hint").disabled = !(me && ["move", "roll_or_double", "take_or_drop"].includes(S.phase));
}

function decisionKey() {
  return S ? JSON.stringify([S.id, S.phase, S.to_act, S.board, S.dice, S.cube, S.game_number]) : null;
}

function fmtClock(turn, reserve) {
  const r = Math.max(0, Math.floor(reserve));
  return `${Math.max(0, Math.ceil(turn))}s + ${Math.floor(r / 60)}:${String(r % 60).padStart(2, "0")}`;
}

function showClock() {
  const box = $("clock");
  if (!S || !S.clock) { box.hidden = true; return; }
  box.hidden = false;
  const running = !S.result && (S.phase === "roll_or_double" || S.phase === "move") ? S.on_roll : null;
  const elapsed = (performance.now() - received) / 1000;
  const part = (who, name) => {
    let { turn, reserve } = S.clock[who];
    if (who === running) {
      reserve -= Math.max(0, elapsed - turn);
      turn = Math.max(0, turn - elapsed);
    }
    const cls = who === running ? "running" : "";
    return `<span id="clock-${who}" class="${cls}">${name} ${fmtClock(turn, reserve)}</span>`;
  };
  box.innerHTML = `Clock (R30): ${part("human", "you")} &nbsp;|&nbsp; ${part("bot", "bot")}`;
}

function render(state) {
  S = state;
  received = performance.now();
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
      setStatus(workStatus());
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
  const strength = S.ply === null || S.ply === undefined ? "" : `, bot at ${S.ply}-ply`;
  $("score").textContent = S.match_length
    ? `Match to ${S.match_length}: you ${S.score[0]}, bot ${S.score[1]}${S.crawford ? " (Crawford game)" : ""}${strength}`
    : `Money game ${S.game_number}: you ${S.score[0]}, bot ${S.score[1]}${strength}`;
  const pips = pipCounts(S.board);
  $("pips").textContent = `Pips: you ${pips.human}, bot ${pips.bot}`;
  $("last-move").textContent = lastMoveText();
  const link = $("record-link");
  link.hidden = false;
  link.href = `/v1/games/${S.id}/record.mat`;
  link.setAttribute("download", `nard-${S.id}.mat`);
  const key = decisionKey();
  if (key !== hintKey) {
    hintKey = key;
    $("hint-body").textContent = "Press Hint for the bot's advice on this decision.";
  }
  clearInterval(poll);
  poll = null;
  if (S.clock && !S.result) {
    // the clock runs on the server: ask it now and then, so a silent player loses on time
    let ticks = 0;
    poll = setInterval(async () => {
      showClock();
      if (++ticks % 8 === 0 && S && S.to_act === "human") {
        try { const fresh = await api("GET", `/v1/games/${S.id}`); if (fresh.result || fresh.phase !== S.phase) render(fresh); } catch (e) { /* keep the last state */ }
      }
    }, 250);
  }
  showClock();
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

async function startGame() {
  const body = {
    rules: $("rules").value,
    match_length: Number($("match-length").value || 0),
    first: $("first").value,
    ply: Number($("bot-ply").value),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    render(await api("POST", "/v1/games", body));
  } catch (e) {
    setStatus(e.message, true);
  }
}

function newGame(ev) {
  ev.preventDefault();
  startGame();
}

// ---- hints and analysis ----------------------------------------------------------------------
function fmt(v) { return v === null || v === undefined ? "-" : (v >= 0 ? "+" : "") + v.toFixed(3); }
function neg(v) { return v === null || v === undefined ? null : -v; }

function playsTable(res, id) {
  const rows = res.plays.slice(0, 12).map((p, i) =>
    `<tr><td>${i + 1}. ${p.move || "(no move)"}</td><td>${fmt(p.equity)}</td><td>${fmt(p.diff)}</td>` +
    `<td>${p.probs.win.toFixed(3)}</td><td>${p.probs.win_gammon.toFixed(3)}</td><td>${p.probs.lose_gammon.toFixed(3)}</td></tr>`);
  return `<div>${res.position_id} ${res.dice.join("-")}: plays ranked by ${label(res.equity)}, ${res.ply}-ply</div>` +
    `<table id="${id}"><tr><th>play</th><th>equity</th><th>diff</th><th>win</th><th>gam</th><th>lgam</th></tr>${rows.join("")}</table>` +
    (res.plays.length ? "" : "<div>No legal play: the roll is forfeited (R16).</div>");
}

function cubeTable(res, ids) {
  const c = res.cube;
  return `<div>${res.position_id}: cube analysis (${c.ply}-ply, ${c.match ? "match equity, normalised" : "per current stake"})</div>` +
    `<table id="${ids.table}"><tr><td>No double</td><td>${fmt(c.no_double)}</td></tr>` +
    `<tr><td>Double, take</td><td>${fmt(c.double_take)}</td></tr>` +
    `<tr><td>Double, pass</td><td>${fmt(c.double_pass)}</td></tr>` +
    `<tr><td>Proper action</td><td id="${ids.decision}">${label(c.decision)}</td></tr>` +
    `<tr><td>Win / gammon</td><td>${c.probs.win.toFixed(3)} / ${c.probs.win_gammon.toFixed(3)}</td></tr></table>`;
}

function showAnalysis(res) {
  const body = $("analysis-body");
  if (res.plays) body.innerHTML = playsTable(res, "analysis-table");
  else if (res.cube) body.innerHTML = cubeTable(res, { table: "cube-table", decision: "cube-decision" });
}

function flipBoard(b) {               // the other side's view of a board
  const out = new Array(26).fill(0);
  for (let i = 0; i < 26; i++) out[i] = -b[25 - i];
  return out;
}

function gameRequest(viewer) {
  // the decision state from `viewer`'s side ("human" or "bot"): board, cube, score
  const human = viewer === "human";
  const req = { board: human ? S.board : flipBoard(S.board), rules: S.rules };
  if (S.rules === "standard") {
    const me = human ? "human" : "bot";
    const owner = S.cube.owner === "centered" ? "centered" : S.cube.owner === me ? "mover" : "opponent";
    req.cube = { value: S.cube.value, owner };
  }
  if (S.match_length) {
    req.match = { length: S.match_length, score: human ? S.score : [S.score[1], S.score[0]], crawford: S.crawford };
  }
  return req;
}

async function hint() {
  const body = $("hint-body");
  const key = decisionKey();
  try {
    let html;
    if (S.phase === "move") {
      const req = gameRequest("human");
      req.dice = S.dice;
      html = playsTable(await api("POST", "/v1/hint", req), "hint-table");
    } else if (S.phase === "roll_or_double") {
      if (S.rules !== "standard") {
        html = `<div class="advice" id="cube-advice">No cube under the ${S.rules} rules (R28): roll.</div>`;
      } else {
        const res = await api("POST", "/v1/hint", gameRequest("human"));
        const d = res.cube.decision;
        const what = S.can_double
          ? (d === "double_take" || d === "double_pass" ? "double" : d === "too_good" ? "roll on for the gammon" : "roll")
          : "roll (you cannot double now)";
        html = cubeTable(res, { table: "hint-cube-table", decision: "hint-cube-decision" }) +
          `<div class="advice" id="cube-advice">Advice: ${what}.</div>`;
      }
    } else if (S.phase === "take_or_drop") {
      // the doubler's (the bot's) cube decision says whether the receiver should take
      const res = await api("POST", "/v1/hint", gameRequest("bot"));
      const c = res.cube;
      const units = c.match ? "match equity, normalised" : "per current stake";
      html = `<div>The bot doubles to ${S.cube.value * 2}: your take or pass (${c.ply}-ply, ${units}, your side)</div>` +
        `<table id="take-table"><tr><td>Take</td><td>${fmt(neg(c.double_take))}</td></tr>` +
        `<tr><td>Pass</td><td>${fmt(neg(c.double_pass))}</td></tr></table>` +
        `<div class="advice" id="take-advice">Advice: ${c.take ? "take" : "pass"}.</div>`;
    } else {
      html = "No decision of yours to advise on.";
    }
    if (decisionKey() === key) body.innerHTML = html;   // still the same decision
  } catch (e) {
    body.innerHTML = `<span class="error">${e.message.replace(/</g, "&lt;")}</span>`;
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
  $("btn-again").addEventListener("click", startGame);
  $("btn-resign").addEventListener("click", () => act("resign", { kind: $("resign-kind").value }));
  $("btn-commit").addEventListener("click", () => { const p = matchingPlay(); if (p) act("move", { board: p.board }); });
  $("btn-undo").addEventListener("click", undo);
  $("btn-hint").addEventListener("click", hint);
  $("btn-analyse").addEventListener("click", analyse);
  $("home-left").addEventListener("change", draw);
  bindBoard();
  draw();
  startGame();  // a game is ready on first load
}

window.nard = { state: () => S, working: () => work };
init();
