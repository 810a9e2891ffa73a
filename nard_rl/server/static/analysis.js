// Match analysis page: upload a .sgf/.mat file to POST /v1/analyze, show the players'
// figures, the winning-chance chart (POST /v1/analyze/chart, drawn by matplotlib on the
// server) and every decision move by move (the board before it, the play made and the
// best one, the equity lost and the mark).  "Roll out" posts the shown position to
// /v1/rollout and polls the job; without that route it says so and nothing else breaks.
"use strict";

const A = { result: null, shown: [], index: 0, rolloutTimer: null };
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "error" : "";
}

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e);
  return e;
}

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// --- upload -------------------------------------------------------------------------
async function upload() {
  const file = $("match-file").files[0];
  if (!file) { setStatus("Choose a .sgf or .mat file first.", true); return; }
  const ply = $("an-ply").value;
  setStatus(`Analysing ${file.name} at ${ply}-ply...`);
  $("btn-upload").disabled = true;
  try {
    const text = await file.text();
    const r = await fetch(`/v1/analyze?ply=${encodeURIComponent(ply)}`, {
      method: "POST", headers: { "Content-Type": "text/plain" }, body: text,
    });
    const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
    if (!r.ok) { setStatus(`Error: ${body.error || r.status}`, true); return; }
    body.source = file.name;
    showResult(body);
    setStatus(`${file.name}: ${body.decisions.length} decisions analysed.`);
  } catch (e) {
    setStatus(`Error: ${e}`, true);
  } finally {
    $("btn-upload").disabled = false;
  }
}

function showResult(res) {
  A.result = res;
  const names = res.names;
  const what = res.match_length ? `${res.match_length}-point match` : "money session";
  $("title").textContent = `${names[0]} vs ${names[1]}: ${what}, ${res.games.length} game(s)`;
  const rows = [
    ["Checker decisions", (p) => p.checker.decisions],
    ["Checker error rate (mEMG)", (p) => p.checker.error_rate.toFixed(1)],
    ["Cube decisions", (p) => p.cube.decisions],
    ["Cube error rate (mEMG)", (p) => p.cube.error_rate.toFixed(1)],
    ["Overall error rate (mEMG)", (p) => p.overall.error_rate.toFixed(1)],
    ["Luck rate (mEMG/roll)", (p) => p.luck_rate.toFixed(1)],
    ["Rating", (p) => p.rating || "-"],
  ];
  let html = "<tr><th></th>" + names.map((n) => `<th>${esc(n)}</th>`).join("") + "</tr>";
  for (const [label, f] of rows) {
    html += `<tr><td>${label}</td>` + names.map((n) => `<td>${esc(f(res.players[n]))}</td>`).join("") + "</tr>";
  }
  $("players").innerHTML = html;
  $("summary").hidden = false;
  $("browser").hidden = false;
  loadChart(res);
  filterDecisions();
}

async function loadChart(res) {
  try {
    const r = await fetch("/v1/analyze/chart", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(res),
    });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const blob = await r.blob();
    $("chart").src = URL.createObjectURL(blob);
  } catch (e) {
    $("chart").alt = `chart unavailable: ${e}`;
  }
}

// --- decisions --------------------------------------------------------------------------
function describe(d) {
  if (d.kind === "checker") return `${d.dice[0]}${d.dice[1]}: ${d.played || "(no move)"}`;
  return d.kind === "take" ? `${d.played} (answer to a double)` : d.played;
}

function filterDecisions() {
  const only = $("only-marked").checked;
  A.shown = A.result.decisions.filter((d) => !only || d.mark);
  A.index = 0;
  const list = $("decision-list");
  list.innerHTML = "";
  A.shown.forEach((d, i) => {
    const li = document.createElement("li");
    const cls = d.mark ? d.mark.replace(" ", "-") : "";
    li.innerHTML = `G${d.game} #${d.move_number} ${esc(d.player)}: ${esc(describe(d))}` +
      (d.equity_lost > 0 ? ` <span class="${cls}">-${d.equity_lost.toFixed(1)}</span>` : "");
    li.addEventListener("click", () => { A.index = i; showDecision(); });
    list.appendChild(li);
  });
  showDecision();
}

function showDecision() {
  const items = $("decision-list").children;
  for (let i = 0; i < items.length; i++) items[i].className = i === A.index ? "current" : "";
  const d = A.shown[A.index];
  $("rollout-result").textContent = "";
  if (!d) {
    $("dec-title").textContent = "No decision to show.";
    $("an-board").innerHTML = "";
    for (const id of ["dec-played", "dec-best", "dec-lost"]) $(id).textContent = "";
    $("dec-alts").innerHTML = "";
    return;
  }
  if (items[A.index]) items[A.index].scrollIntoView({ block: "nearest" });
  const kind = { checker: "checker play", double: "cube decision", take: "take or pass" }[d.kind];
  $("dec-title").textContent = `Game ${d.game}, move ${d.move_number}: ${d.player}, ${kind}`;
  drawBoard(d.board, d.kind === "take" ? "doubler" : d.player, d.dice, d.cube);
  $("dec-played").innerHTML = `Played: <b>${esc(describe(d))}</b>`;
  $("dec-best").innerHTML = `Best: <b>${esc(d.best)}</b>`;
  const cls = d.mark ? d.mark.replace(" ", "-") : "";
  const win = `winning chance ${(100 * d.win_before).toFixed(1)}% before, ${(100 * d.win_after).toFixed(1)}% after`;
  $("dec-lost").innerHTML = `Equity lost: <span class="${cls}">${d.equity_lost.toFixed(1)} mEMG` +
    `${d.mark ? " (" + d.mark + ")" : ""}</span>; ${win}`;
  const alts = $("dec-alts");
  alts.innerHTML = "";
  if (d.kind === "checker") {
    for (const a of d.alternatives) {
      const li = document.createElement("li");
      li.textContent = `${a.move}  ${a.equity >= 0 ? "+" : ""}${a.equity.toFixed(3)}  (${a.diff.toFixed(3)})`;
      alts.appendChild(li);
    }
  } else if (d.cube_equities) {
    for (const [k, v] of Object.entries(d.cube_equities)) {
      const li = document.createElement("li");
      li.textContent = `${k.replace("_", " ")}: ${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
      alts.appendChild(li);
    }
  }
}

function step(delta) {
  if (!A.shown.length) return;
  A.index = Math.max(0, Math.min(A.shown.length - 1, A.index + delta));
  showDecision();
}

// --- board (the deciding side at the bottom, its home board bottom right) -------------
function drawBoard(board, who, dice, cube) {
  const svg = $("an-board");
  svg.innerHTML = "";
  const W = 38, X0 = 20, BAR = 30, H = 140, TOP = 20, BOT = 320;
  el("rect", { x: 0, y: 0, width: 560, height: 356, fill: "#f3ecd9" }, svg);
  const colX = (c) => X0 + c * W + (c >= 6 ? BAR : 0);
  const pointX = (p) => (p <= 12 ? colX(12 - p) : colX(p - 13));
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = p >= 13;
    const tip = top ? TOP + H : BOT - H, base = top ? TOP : BOT;
    el("polygon", { points: `${x},${base} ${x + W},${base} ${x + W / 2},${tip}`, class: p % 2 ? "pt-a" : "pt-b" }, svg);
    el("text", { x: x + W / 2, y: top ? TOP - 5 : BOT + 14, "text-anchor": "middle", "font-size": 10 }, svg, String(p));
    const n = board[p];
    if (n) stack(svg, x + W / 2, top, Math.abs(n), n > 0 ? "chk-me" : "chk-opp", TOP, BOT);
  }
  const barX = colX(6) - BAR / 2;
  if (board[25] > 0) stack(svg, barX, false, board[25], "chk-me", TOP + 60, BOT - 60);
  if (board[0] < 0) stack(svg, barX, true, -board[0], "chk-opp", TOP + 60, BOT - 60);
  let mine = board[25], theirs = -board[0];
  for (let p = 1; p <= 24; p++) { if (board[p] > 0) mine += board[p]; else theirs -= board[p]; }
  el("text", { x: 512, y: BOT - 20, "font-size": 12 }, svg, `off ${15 - mine}`);
  el("text", { x: 512, y: TOP + 30, "font-size": 12 }, svg, `off ${15 - theirs}`);
  el("text", { x: 512, y: 175, "font-size": 12 }, svg, `cube ${cube.value}`);
  el("text", { x: 512, y: 190, "font-size": 11 }, svg, cube.owner);
  if (dice) el("text", { x: colX(9), y: 176, "font-size": 18, "text-anchor": "middle" }, svg, `${dice[0]}-${dice[1]}`);
  el("text", { x: 20, y: 350, "font-size": 11 }, svg, `on roll (bottom, light): ${who}`);
}

function stack(svg, cx, top, n, cls, TOP, BOT) {
  const R = 15;
  for (let i = 0; i < Math.min(n, 5); i++) {
    const cy = top ? TOP + R + i * 2 * R : BOT - R - i * 2 * R;
    el("circle", { cx, cy, r: R - 1, class: cls }, svg);
  }
  if (n > 5) {
    const cy = top ? TOP + R + 8 * R : BOT - R - 8 * R;
    el("text", { x: cx, y: cy + 4, "text-anchor": "middle", "font-size": 12, fill: cls === "chk-me" ? "#000" : "#fff" }, svg, String(n));
  }
}

// --- roll out the shown position (route of its own; absent on older servers) -----------
async function rollout() {
  const d = A.shown[A.index];
  if (!d) return;
  const out = $("rollout-result");
  const trials = parseInt($("rollout-trials").value, 10) || 1296;
  const body = { board: d.board, trials, seed: 1, cube: d.cube };
  if (d.match) body.match = d.match;
  if (d.kind === "checker") body.dice = d.dice;
  clearTimeout(A.rolloutTimer);
  out.textContent = "Starting a rollout...";
  let r;
  try {
    r = await fetch("/v1/rollout", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    out.textContent = `Rollouts are not available: ${e}`;
    return;
  }
  if (r.status === 404 || r.status === 405) { out.textContent = "This server has no rollouts (/v1/rollout)."; return; }
  const job = await r.json().catch(() => ({}));
  if (!r.ok || !job.id) { out.textContent = `Rollout refused: ${job.error || r.status}`; return; }
  poll(job.id, d);
}

async function poll(id, decision) {
  const out = $("rollout-result");
  let job;
  try {
    const r = await fetch(`/v1/rollout/${encodeURIComponent(id)}`);
    job = await r.json();
    if (!r.ok) { out.textContent = `Rollout: ${job.error || r.status}`; return; }
  } catch (e) { out.textContent = `Rollout: ${e}`; return; }
  if (A.shown[A.index] !== decision) return;  // another decision is shown now
  if (job.status === "done") { out.textContent = formatRollout(job.result); return; }
  if (job.status === "failed" || job.status === "cancelled") { out.textContent = `Rollout ${job.status}: ${job.error || ""}`; return; }
  const p = job.progress || {};
  out.textContent = `Rolling out: ${p.trials_done || 0} of ${p.trials_total || "?"} trials...`;
  A.rolloutTimer = setTimeout(() => poll(id, decision), 1000);
}

function formatRollout(res) {
  if (!res) return "Rollout done.";
  const lines = [`Rollout, ${res.trials} trials:`];
  if (Array.isArray(res.plays)) {
    for (const p of res.plays.slice(0, 6)) {
      lines.push(`${p.move.padEnd(24)} ${fmt(p.equity)} +- ${fmtSe(p.equity_se)}  diff ${fmt(p.diff)}`);
    }
  } else {
    if (res.win !== undefined) lines.push(`win ${(100 * res.win).toFixed(2)}% +- ${(100 * (res.win_se || 0)).toFixed(2)}`);
    if (res.equity !== undefined) lines.push(`equity ${fmt(res.equity)} +- ${fmtSe(res.equity_se)}`);
    if (res.cube_decision) lines.push(`cube: ${JSON.stringify(res.cube_decision)}`);
  }
  return lines.join("\n");
}
function fmt(v) { return typeof v === "number" ? (v >= 0 ? "+" : "") + v.toFixed(3) : "-"; }
function fmtSe(v) { return typeof v === "number" ? v.toFixed(3) : "-"; }

function init() {
  $("btn-upload").addEventListener("click", upload);
  $("only-marked").addEventListener("change", filterDecisions);
  $("btn-prev").addEventListener("click", () => step(-1));
  $("btn-next").addEventListener("click", () => step(1));
  $("btn-rollout").addEventListener("click", rollout);
  document.addEventListener("keydown", (e) => {
    if (A.result && e.target.tagName !== "INPUT") {
      if (e.key === "ArrowLeft") step(-1);
      if (e.key === "ArrowRight") step(1);
    }
  });
}
init();
window.nardAnalysis = { state: () => A, show: showResult };
