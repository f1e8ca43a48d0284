// bgnet's board page: draws positions as SVG, asks the app's JSON API for hints, and plays games against bgnet.
// No framework and no build step. A board here is 26 signed slots seen from the bottom player
// (slots 1..24 in the bottom player's numbering, positive = bottom's checkers, 25 = bottom's bar,
// 0 = top's bar stored negative), the same layout as bgnet.core.position.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const W = 780, H = 560, PW = 50, LEFT = 70, BAR_L = 370, BAR_R = 410, RIGHT_END = 710;
const TOP = 30, BOT = 530, TRI = 210, R = 21, MID = 280, SHOWN = 5;

const ui = {
  mirror: false,        // home board on the left instead of the right
  numbersFromTop: false, // label the points in the top player's numbering
  mode: "analyse",
};
let view = { board: null, dice: null, diceOwner: "bottom", cube: null, arrows: [], positionId: "" };

// -- small helpers ------------------------------------------------------------------------
const $ = (id) => document.getElementById(id);
function el(name, attrs, parent) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}
async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(path, opts);
  let data;
  try { data = await res.json(); } catch (e) { data = { error: `the server answered ${res.status} without JSON` }; }
  if (!res.ok) throw new Error(data.error || `the server answered ${res.status}`);
  return data;
}
function setStatus(id, text, isError) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("error", !!isError);
}
const pct = (x) => (100 * x).toFixed(1);
const signed = (x) => (x >= 0 ? "+" : "") + x.toFixed(3);

// -- geometry -----------------------------------------------------------------------------
function mx(x) { return ui.mirror ? W - x : x; }
function pointX(bp) {
  let x;
  if (bp <= 6) x = RIGHT_END - (bp - 0.5) * PW;
  else if (bp <= 12) x = BAR_L - (bp - 6.5) * PW;
  else if (bp <= 18) x = LEFT + (bp - 12.5) * PW;
  else x = BAR_R + (bp - 18.5) * PW;
  return mx(x);
}
const isTopRow = (bp) => bp >= 13;
function stackY(bp, i) {
  const k = Math.min(i, SHOWN - 1);
  return isTopRow(bp) ? TOP + R + k * 2 * R : BOT - R - k * 2 * R;
}
const BAR_X = (BAR_L + BAR_R) / 2;
function barY(slot, i) {  // slot 25: the bottom player's bar (upper half), slot 0: the top player's (lower half)
  const k = Math.min(i, 2);
  return slot === 25 ? MID - 35 - k * 2 * R : MID + 35 + k * 2 * R;
}
const trayX = () => mx(747);
const cubeX = () => mx(32);
// Where checker number i (from the base of its stack) of a slot sits.
function spot(slot, i) {
  if (slot === 25 || slot === 0) return [BAR_X, barY(slot, i)];
  return [pointX(slot), stackY(slot, i)];
}

// -- drawing ------------------------------------------------------------------------------
function drawBoard() {
  const svg = $("board");
  svg.textContent = "";
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "arrowhead", markerWidth: 4, markerHeight: 4, refX: 2.5, refY: 2, orient: "auto" }, defs);
  el("path", { d: "M0,0 L4,2 L0,4 z", fill: "#ffd400" }, marker);
  el("rect", { x: 0, y: 0, width: W, height: H, fill: "#6b4a2b" }, svg);
  el("rect", { class: "felt", x: LEFT, y: TOP, width: BAR_L - LEFT, height: BOT - TOP }, svg);
  el("rect", { class: "felt", x: BAR_R, y: TOP, width: RIGHT_END - BAR_R, height: BOT - TOP }, svg);
  el("rect", { class: "bar-area", x: BAR_L, y: TOP, width: BAR_R - BAR_L, height: BOT - TOP }, svg);
  el("rect", { class: "tray", x: mx(747) - 27, y: TOP, width: 54, height: BOT - TOP }, svg);
  const b = view.board;
  svg.setAttribute("data-position-id", view.positionId || "");
  const selectable = playSelectable();
  for (let bp = 1; bp <= 24; bp++) {
    const x = pointX(bp), top = isTopRow(bp);
    const g = el("g", { class: "point", "data-point": bp, "data-count": b ? b[bp] : 0 }, svg);
    const tip = top ? TOP + TRI : BOT - TRI, base = top ? TOP : BOT;
    el("polygon", { class: bp % 2 ? "tri-a" : "tri-b", points: `${x - PW / 2},${base} ${x + PW / 2},${base} ${x},${tip}` }, g);
    const label = ui.numbersFromTop ? 25 - bp : bp;
    el("text", { class: "point-label", x: x, y: top ? TOP - 10 : BOT + 20 }, svg).textContent = label;
    el("rect", { class: "hit", x: x - PW / 2, y: top ? TOP : BOT - 250, width: PW, height: 250 }, g);
    if (selectable.has(bp)) g.classList.add("selectable");
    if (play.selected === bp) g.classList.add("selected");
    if (b) drawStack(g, bp, b[bp]);
    g.addEventListener("click", () => onPointClick(bp));
  }
  for (const slot of [25, 0]) {  // the bars
    const g = el("g", { class: "point bar", "data-point": slot, "data-count": b ? b[slot] : 0 }, svg);
    el("rect", { class: "hit", x: BAR_L, y: slot === 25 ? TOP : MID, width: BAR_R - BAR_L, height: MID - TOP }, g);
    if (selectable.has(slot)) g.classList.add("selectable");
    if (play.selected === slot) g.classList.add("selected");
    if (b) drawStack(g, slot, b[slot]);
    if (slot === 25) g.addEventListener("click", () => onPointClick(25));
  }
  // The tray: borne-off checkers (bottom player's at the bottom), and the place to click to bear off.
  const offBottom = b ? 15 - b.slice(1).filter((n) => n > 0).reduce((s, n) => s + n, 0) : 0;
  const offTop = b ? 15 + b.slice(0, 25).filter((n) => n < 0).reduce((s, n) => s + n, 0) : 0;
  const tray = el("g", { id: "tray", class: "point tray-group", "data-point": "off", "data-off-bottom": offBottom, "data-off-top": offTop }, svg);
  el("rect", { class: "hit", x: trayX() - 27, y: TOP, width: 54, height: BOT - TOP }, tray);
  for (let i = 0; i < offBottom; i++) el("rect", { class: "checker bottom", x: trayX() - 20, y: BOT - 12 - i * 12, width: 40, height: 10 }, tray);
  for (let i = 0; i < offTop; i++) el("rect", { class: "checker top", x: trayX() - 20, y: TOP + 2 + i * 12, width: 40, height: 10 }, tray);
  if (offBottom) el("text", { class: "off-text", x: trayX(), y: MID + 20 }, tray).textContent = offBottom;
  if (offTop) el("text", { class: "off-text", x: trayX(), y: MID - 10 }, tray).textContent = offTop;
  tray.addEventListener("click", () => onPointClick(0, true));
  drawCube(svg);
  drawDice(svg);
  drawArrows(svg);
  if (b) {
    const pips = [0, 0];
    for (let s = 1; s <= 25; s++) if (b[s] > 0) pips[0] += s * b[s];
    for (let s = 0; s <= 24; s++) if (b[s] < 0) pips[1] += (25 - s) * -b[s];
    svg.setAttribute("data-pips", pips.join(","));
  }
}

function drawStack(g, slot, count) {
  const n = Math.abs(count);
  if (!n) return;
  const cls = count > 0 ? "bottom" : "top";
  const shown = slot === 25 || slot === 0 ? Math.min(n, 3) : Math.min(n, SHOWN);
  for (let i = 0; i < shown; i++) {
    const [x, y] = spot(slot, i);
    el("circle", { class: `checker ${cls}`, cx: x, cy: y, r: R - 1, "data-point": slot }, g);
  }
  if (n > shown) {
    const [x, y] = spot(slot, shown - 1);
    el("text", { class: `stack-count ${cls}`, x: x, y: y }, g).textContent = n;
  }
}

function drawCube(svg) {
  if (!view.cube) return;
  const y = view.cube.owner === "bottom" ? BOT - 35 : view.cube.owner === "top" ? TOP + 35 : MID;
  const g = el("g", { id: "cube", "data-value": view.cube.value, "data-owner": view.cube.owner }, svg);
  el("rect", { class: "cube", x: cubeX() - 22, y: y - 22, width: 44, height: 44, rx: 5 }, g);
  el("text", { class: "cube-text", x: cubeX(), y: y }, g).textContent = view.cube.value === 1 ? 64 : view.cube.value;
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]], 4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
  5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]], 6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };
function drawDice(svg) {
  if (!view.dice) return;
  const g = el("g", { id: "dice", "data-dice": view.dice.join("") }, svg);
  const cx0 = view.diceOwner === "bottom" ? (BAR_R + RIGHT_END) / 2 : (LEFT + BAR_L) / 2;
  view.dice.forEach((d, i) => {
    const cx = mx(cx0 + (i ? 30 : -30)), cy = MID;
    el("rect", { class: "die", x: cx - 20, y: cy - 20, width: 40, height: 40, rx: 6 }, g);
    for (const [dx, dy] of PIPS[d]) el("circle", { class: "pip", cx: cx + dx * 11, cy: cy + dy * 11, r: 4 }, g);
  });
}

// Arrows for each one-die step of a play, drawn on the board before the play.
function drawArrows(svg) {
  const g = el("g", { id: "move-arrows", "data-steps": JSON.stringify(view.arrows.map((a) => a.steps)) }, svg);
  const b = view.board;
  if (!b) return;
  for (const { steps, mover } of view.arrows) {
    const counts = b.slice();
    for (const [from, to] of steps) {
      let src, dst;
      const own = mover === "bottom" ? 1 : -1;
      const f = mover === "bottom" ? from : (from === 25 ? 0 : 25 - from);
      const t = to === 0 ? "off" : mover === "bottom" ? to : 25 - to;
      src = spot(f, Math.max(Math.abs(counts[f]) - 1, 0));
      counts[f] -= own;
      if (t === "off") dst = [trayX(), mover === "bottom" ? BOT - 40 : TOP + 40];
      else {
        const mine = counts[t] * own > 0 ? Math.abs(counts[t]) : 0;
        dst = spot(t, mine);
        if (counts[t] * own < 0) counts[t] = 0;
        counts[t] += own;
      }
      el("line", { class: `arrow ${mover === "top" ? "top-mover" : ""}`, x1: src[0], y1: src[1], x2: dst[0], y2: dst[1] }, g);
    }
  }
}

// -- analyse mode --------------------------------------------------------------------------
const analysis = { text: "", info: null, dice: [0, 0], seq: 0 };
const START_POSITION = "4HPwATDgc/ABMA";

// -- the address: /?position=ID[&match=MATCHID][&dice=31][&ply=2] opens that position, and the page writes what it
// shows back into the address, so that a link shares it. An XGID goes in position= whole.
function fromAddress() {
  const q = new URLSearchParams(window.location.search);
  const text = (name) => (q.get(name) || "").trim().replace(/ /g, "+");  // a Position ID's "+" often arrives as " "
  let position = text("position") || text("xgid");
  const match = text("match");
  if (position && match && !/^xgid=/i.test(position) && !position.includes(":")) position = `${position}:${match}`;
  const dice = (q.get("dice") || "").replace(/[^1-6]/g, "");
  return { position: position || START_POSITION, dice: dice.length === 2 ? [Number(dice[0]), Number(dice[1])] : null,
           ply: q.get("ply") };
}
function toAddress() {
  if (!analysis.info) return;
  const q = new URLSearchParams();
  const [pid, mid] = /^xgid=/i.test(analysis.text) ? [analysis.text, ""] : analysis.text.split(":");
  q.set("position", pid);
  if (mid) q.set("match", mid);
  const [a, b] = analysis.dice;
  if (a && b) q.set("dice", `${a}${b}`);
  if ($("ply-select").value !== "1") q.set("ply", $("ply-select").value);
  history.replaceState(null, "", `${window.location.pathname}?${q.toString()}`);
}

function makeDieButtons() {
  for (const which of [0, 1]) {
    const box = $(which ? "die2-buttons" : "die1-buttons");
    for (let v = 1; v <= 6; v++) {
      const btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = v;
      btn.id = `die${which + 1}-${v}`;
      btn.addEventListener("click", () => { analysis.dice[which] = v; diceChanged(); });
      box.appendChild(btn);
    }
  }
}
function showDiceButtons() {
  for (const which of [0, 1]) for (let v = 1; v <= 6; v++)
    $(`die${which + 1}-${v}`).classList.toggle("on", analysis.dice[which] === v);
}
function diceChanged() {
  showDiceButtons();
  const [a, b] = analysis.dice;
  if (a && b) $("dice-input").value = `${a}${b}`;
  if (analysis.info) {
    toAddress();
    view.dice = a && b ? [a, b] : null;
    drawBoard();
    requestHints();
  }
}

async function loadPosition() {
  const text = $("position-input").value.trim();
  if (!text) return;
  const seq = ++analysis.seq;
  try {
    const info = await api(`/api/position?position=${encodeURIComponent(text)}`);
    if (seq !== analysis.seq) return;
    analysis.text = text;
    analysis.info = info;
    if (info.dice) { analysis.dice = info.dice.slice(); showDiceButtons(); $("dice-input").value = info.dice.join(""); }
    showAnalysedBoard();
    $("board-ids").textContent = `${info.position_id}  ${info.xgid}`;
    toAddress();
    requestHints();
  } catch (err) {
    if (seq === analysis.seq) setStatus("analyse-status", err.message, true);
  }
}

function showAnalysedBoard() {
  const info = analysis.info;
  const m = info.match;
  const owner = !m || m.cube_owner === "centred" ? "centred" : m.cube_owner === "me" ? "bottom" : "top";
  const [a, b] = analysis.dice;
  view = { board: info.board, dice: a && b ? [a, b] : null, diceOwner: "bottom", positionId: info.position_id,
           cube: { value: m ? m.cube_value : 1, owner }, arrows: [] };
  drawBoard();
}

async function requestHints() {
  if (!analysis.info) return;
  const seq = ++analysis.seq;
  const [a, b] = analysis.dice;
  const ply = $("ply-select").value;
  const pos = encodeURIComponent(analysis.text);
  const cubeReq = api(`/api/cube?position=${pos}&ply=${Math.min(ply, 1)}`);
  const tbody = $("hints").querySelector("tbody");
  try {
    if (a && b) {
      setStatus("analyse-status", "thinking...");
      const cubeful = $("cubeful-box").checked;
      const hint = await api(`/api/hint?position=${pos}&dice=${a}${b}&ply=${ply}&cubeful=${cubeful}`);
      if (seq !== analysis.seq) return;
      showHints(hint);
    } else {
      tbody.textContent = "";
      setStatus("analyse-status", "Choose or roll the dice to see the ranked plays.");
    }
    const cube = await cubeReq;
    if (seq !== analysis.seq) return;
    showCube($("cube-hint"), cube, "the side on roll");
  } catch (err) {
    if (seq === analysis.seq) setStatus("analyse-status", err.message, true);
  }
}

function showHints(hint) {
  const tbody = $("hints").querySelector("tbody");
  tbody.textContent = "";
  hint.moves.forEach((m, i) => {
    const tr = document.createElement("tr");
    tr.dataset.rank = m.rank;
    tr.dataset.move = m.move;
    tr.dataset.steps = JSON.stringify(m.steps);
    const cells = [m.rank, m.move || "(no play)", signed(m.equity), i ? signed(m.diff) : "", pct(m.probs.win), pct(m.probs.win_gammon), pct(m.probs.lose_gammon)];
    for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); }
    tr.title = `${m.ply}-ply; afterstate ${m.position_id}`;
    const show = () => { for (const r of tbody.children) r.classList.toggle("shown", r === tr); view.arrows = [{ steps: m.steps, mover: "bottom" }]; drawBoard(); };
    tr.addEventListener("mouseenter", show);
    tr.addEventListener("click", show);
    tbody.appendChild(tr);
  });
  if (hint.moves.length) { tbody.children[0].classList.add("shown"); view.arrows = [{ steps: hint.moves[0].steps, mover: "bottom" }]; drawBoard(); }
  const where = hint.match && hint.match.match_length ? `${hint.match.match_length}-point match` : "money";
  setStatus("analyse-status", `${hint.legal_plays} legal play${hint.legal_plays === 1 ? "" : "s"} of ${hint.dice.join("-")}, ${hint.ply}-ply, ${hint.equity} (${where}).`);
}

function showCube(node, cube, who) {
  const d = cube.decision;
  const lines = [`Cube (${cube.ply}-ply, ${who}): ${d.proper_cube_action}`,
    `No double ${signed(d.equity_no_double)}` + (d.equity_double_take === null ? "" : `, double/take ${signed(d.equity_double_take)}, double/pass ${signed(d.equity_double_pass)}`),
    `Win ${pct(d.probs.win)}%, gammons ${pct(d.probs.win_gammon)}% / ${pct(d.probs.lose_gammon)}%` + (d.take_point === null ? "" : `; take point ${pct(d.take_point)}%`),
    `Rules: ${cube.rules.text}`];
  node.textContent = lines.join("\n");
  node.dataset.action = cube.action;
}

// -- play mode ----------------------------------------------------------------------------
const play = { data: null, local: null, turnBoard: null, steps: [], diceLeft: [], selected: null, busy: false };

function playSelectable() {
  const s = new Set();
  if (ui.mode !== "play" || !canMoveNow()) return s;
  const b = play.local;
  if (b[25] > 0) { s.add(25); return s; }
  for (let p = 1; p <= 24; p++) if (b[p] > 0) s.add(p);
  return s;
}
const canMoveNow = () => !!(play.data && play.data.turn === "you" && play.data.phase === "move" && play.local && !play.busy);

async function sendPlay(body) {
  if (play.busy) return;
  play.busy = true;
  setButtons();
  try {
    const data = await api("/api/play", body);
    showPlay(data);
  } catch (err) {
    setStatus("play-status", err.message, true);
  } finally {
    play.busy = false;
    setButtons();
    drawBoard();
  }
}
const playAction = (action, extra) => sendPlay(Object.assign({ action, state: play.data && play.data.state }, extra || {}));

function showPlay(data) {
  play.data = data;
  play.turnBoard = data.board.slice();
  play.local = data.board.slice();
  play.steps = [];
  play.selected = null;
  play.diceLeft = data.dice ? (data.dice[0] === data.dice[1] ? [data.dice[0], data.dice[0], data.dice[0], data.dice[0]] : data.dice.slice()) : [];
  const log = $("play-log");
  for (const ev of data.events) { const li = document.createElement("li"); li.textContent = ev.text; li.dataset.who = ev.who; li.dataset.action = ev.action; if (ev.move !== undefined) li.dataset.move = ev.move; if (ev.dice) li.dataset.dice = ev.dice.join(""); log.appendChild(li); }
  log.scrollTop = log.scrollHeight;
  const len = data.length ? `Match to ${data.length}` : "Money game";
  $("score").textContent = `${len}: you ${data.score.you}, bgnet ${data.score.bgnet}; cube ${data.cube.value} ${data.cube.owner === "centred" ? "centred" : data.cube.owner === "you" ? "yours" : "bgnet's"}${data.crawford ? " (Crawford game)" : ""}`;
  $("score").title = `Rules: ${data.rules.text}`;
  $("score").dataset.you = data.score.you;
  $("score").dataset.bgnet = data.score.bgnet;
  let status;
  if (data.match_over) status = `The match is over: ${data.score.you > data.score.bgnet ? "you win" : "bgnet wins"}.`;
  else if (data.phase === "over") status = `Game over: ${data.result.winner === "you" ? "you win" : "bgnet wins"} ${data.result.points}. Click Next game.`;
  else if (data.phase === "doubled") status = `bgnet doubles to ${2 * data.cube.value}: take${data.may_beaver ? ", beaver" : ""} or pass?`;
  else if (data.phase === "beavered") status = `bgnet beavered: raccoon to ${2 * data.cube.value}, or roll on.`;
  else if (data.phase === "move") status = `Your roll: ${data.dice.join("-")}. Move your checkers.`;
  else status = "Roll, or double.";
  setStatus("play-status", status);
  $("play-hint").textContent = "";
  $("board-ids").textContent = `${data.position_id}  ${data.xgid}`;
  view = { board: play.local, dice: data.dice, diceOwner: "bottom", positionId: data.position_id,
           cube: { value: data.cube.value, owner: data.cube.owner === "you" ? "bottom" : data.cube.owner === "bgnet" ? "top" : "centred" }, arrows: [] };
}

function setButtons() {
  const d = play.data, busy = play.busy;
  const myRoll = !!d && d.turn === "you" && d.phase === "roll";
  $("play-roll-button").disabled = busy || !(myRoll || (d && d.may_raccoon));
  $("play-double-button").disabled = busy || !myRoll || !d.may_double;
  const doubled = !!d && d.phase === "doubled" && d.turn === "bgnet";
  $("play-take-button").disabled = busy || !doubled;
  $("play-pass-button").disabled = busy || !doubled;
  $("play-beaver-button").disabled = busy || !doubled || !d.may_beaver;
  $("play-raccoon-button").disabled = busy || !(d && d.may_raccoon);
  const moving = !!d && d.turn === "you" && d.phase === "move";
  $("play-undo-button").disabled = busy || !moving;
  $("play-move-input").disabled = busy || !moving;
  $("play-move-button").disabled = busy || !moving;
  $("play-hint-button").disabled = busy || !(moving || myRoll);
  $("play-next-button").disabled = busy || !(d && d.phase === "over" && !d.match_over);
}

function onPointClick(slot, isTray) {
  if (ui.mode !== "play" || !canMoveNow()) return;
  const b = play.local;
  if (isTray) { if (play.selected !== null) tryStep(play.selected, 0); return; }
  if (play.selected === null) {
    if (b[slot] > 0 && (b[25] === 0 || slot === 25)) play.selected = slot;
  } else if (play.selected === slot) {
    play.selected = null;
  } else if (b[slot] > 0 && !tryStep(play.selected, slot, true) && (b[25] === 0 || slot === 25)) {
    play.selected = slot;
  } else {
    tryStep(play.selected, slot);
  }
  drawBoard();
}

// One checker from `from` to `to` (0 = off) with one die, or with several dice through open points.
function tryStep(from, to, quiet) {
  const path = findPath(play.local, from, to, play.diceLeft);
  if (!path) { if (!quiet) setStatus("play-status", "That checker cannot go there with these dice.", true); return false; }
  for (const [f, t, die] of path) {
    applyStep(play.local, f, t);
    play.diceLeft.splice(play.diceLeft.indexOf(die), 1);
    play.steps.push([f, t]);
  }
  play.selected = null;
  view.board = play.local;
  checkComplete();
  return true;
}
function allHome(b) { for (let p = 7; p <= 25; p++) if (b[p] > 0) return false; return true; }
function singleStep(b, from, die) {  // the landing slot of one die from `from`, or null; 0 = off
  if (b[from] <= 0 || (b[25] > 0 && from !== 25)) return null;
  const to = from - die;
  if (to >= 1) return b[to] >= -1 ? to : null;
  if (!allHome(b)) return null;
  if (to === 0) return 0;
  for (let p = from + 1; p <= 6; p++) if (b[p] > 0) return null;  // a higher die bears off only from the highest point
  return 0;
}
function findPath(b, from, to, dice) {
  const uniq = [...new Set(dice)];
  for (const die of uniq) {
    const land = singleStep(b, from, die);
    if (land === null) continue;
    if (land === to) return [[from, land, die]];
    if (land !== 0 && dice.length > 1 && (to === 0 || land > to)) {
      const rest = dice.slice(); rest.splice(rest.indexOf(die), 1);
      const copy = b.slice(); applyStep(copy, from, land);
      const more = findPath(copy, land, to, rest);
      if (more) return [[from, land, die], ...more];
    }
  }
  return null;
}
function applyStep(b, from, to) {
  b[from] -= 1;
  if (to === 0) return;
  if (b[to] === -1) { b[to] = 0; b[0] -= 1; }
  b[to] += 1;
}
const sameBoard = (x, y) => x.every((v, i) => v === y[i]);

function checkComplete() {
  const legal = play.data.legal_moves;
  const need = legal.length ? legal[0].steps.length : 0;
  const match = legal.find((m) => m.after_board && sameBoard(m.after_board, play.local) && m.steps.length === play.steps.length);
  if (match) { playAction("move", { move: match.position_id }); return; }
  if (play.steps.length >= need || play.diceLeft.length === 0) {
    setStatus("play-status", "That is not a legal play of these dice (use as many dice as you can); try again.", true);
    undoMoves();
  } else {
    setStatus("play-status", `${play.diceLeft.length} more to play: ${play.diceLeft.join(", ")}.`);
  }
}
function undoMoves() {
  if (!play.turnBoard) return;
  play.local = play.turnBoard.slice();
  play.steps = [];
  play.selected = null;
  const d = play.data.dice;
  play.diceLeft = d ? (d[0] === d[1] ? [d[0], d[0], d[0], d[0]] : d.slice()) : [];
  view.board = play.local;
  drawBoard();
}

async function playHint() {
  const d = play.data;
  if (!d) return;
  try {
    if (d.phase === "move") {
      const hint = await api(`/api/hint?position=${encodeURIComponent(d.xgid)}&ply=1&top=3`);
      $("play-hint").textContent = "Best plays: " + hint.moves.map((m) => `${m.move} (${signed(m.equity)})`).join(", ");
      view.arrows = [{ steps: hint.moves[0].steps, mover: "bottom" }];
      drawBoard();
    } else {
      // the game's own rules: an XGID records the Jacoby rule and beavers only
      const rules = d.length ? "" : ["jacoby", "beavers", "raccoons", "max_cube"].map((k) => `&${k}=${d.rules[k]}`).join("");
      showCube($("play-hint"), await api(`/api/cube?position=${encodeURIComponent(d.xgid)}&ply=1${rules}`), "you");
    }
  } catch (err) { setStatus("play-status", err.message, true); }
}

// -- wiring -------------------------------------------------------------------------------
function setMode(mode) {
  ui.mode = mode;
  $("analyse-panel").hidden = mode !== "analyse";
  $("play-panel").hidden = mode !== "play";
  $("tab-analyse").classList.toggle("active", mode === "analyse");
  $("tab-play").classList.toggle("active", mode === "play");
  $("tab-analyse").setAttribute("aria-pressed", mode === "analyse");
  $("tab-play").setAttribute("aria-pressed", mode === "play");
  if (mode === "analyse" && analysis.info) showAnalysedBoard();
  else if (mode === "play" && play.data) { view.board = play.local; view.dice = play.data.dice; drawBoard(); }
  else { view = { board: null, dice: null, diceOwner: "bottom", cube: null, arrows: [], positionId: "" }; drawBoard(); }
}

function init() {
  makeDieButtons();
  $("position-input").addEventListener("paste", () => setTimeout(loadPosition, 0));
  $("position-input").addEventListener("keydown", (e) => { if (e.key === "Enter") loadPosition(); });
  $("position-input").addEventListener("change", loadPosition);
  $("show-button").addEventListener("click", loadPosition);
  $("dice-input").addEventListener("input", () => {
    const t = $("dice-input").value.replace(/[^1-6]/g, "");
    if (t.length === 2) { analysis.dice = [Number(t[0]), Number(t[1])]; diceChanged(); }
  });
  $("roll-button").addEventListener("click", () => {
    analysis.dice = [1 + Math.floor(Math.random() * 6), 1 + Math.floor(Math.random() * 6)];
    diceChanged();
  });
  $("ply-select").addEventListener("change", () => { toAddress(); requestHints(); });
  $("cubeful-box").addEventListener("change", requestHints);
  $("flip-button").addEventListener("click", () => { ui.mirror = !ui.mirror; drawBoard(); });
  $("numbers-button").addEventListener("click", () => {
    ui.numbersFromTop = !ui.numbersFromTop;
    $("numbers-button").textContent = ui.numbersFromTop ? "Number from bottom" : "Number from top";
    drawBoard();
  });
  $("tab-analyse").addEventListener("click", () => setMode("analyse"));
  $("tab-play").addEventListener("click", () => setMode("play"));
  $("new-match-button").addEventListener("click", () => {
    $("play-log").textContent = "";
    sendPlay({ action: "new", length: Number($("length-select").value) });
  });
  $("play-roll-button").addEventListener("click", () => playAction("roll"));
  $("play-double-button").addEventListener("click", () => playAction("double"));
  $("play-take-button").addEventListener("click", () => playAction("take"));
  $("play-pass-button").addEventListener("click", () => playAction("pass"));
  $("play-beaver-button").addEventListener("click", () => playAction("beaver"));
  $("play-raccoon-button").addEventListener("click", () => playAction("raccoon"));
  $("play-next-button").addEventListener("click", () => playAction("next"));
  $("play-undo-button").addEventListener("click", undoMoves);
  $("play-hint-button").addEventListener("click", playHint);
  const typed = () => { const t = $("play-move-input").value.trim(); if (t) { $("play-move-input").value = ""; playAction("move", { move: t }); } };
  $("play-move-button").addEventListener("click", typed);
  $("play-move-input").addEventListener("keydown", (e) => { if (e.key === "Enter") typed(); });
  drawBoard();
  const opening = fromAddress();  // the starting position unless the address names another
  if (opening.dice) { analysis.dice = opening.dice; showDiceButtons(); $("dice-input").value = opening.dice.join(""); }
  if (["0", "1", "2"].includes(opening.ply)) $("ply-select").value = opening.ply;
  $("position-input").value = opening.position;
  loadPosition();
}
document.addEventListener("DOMContentLoaded", init);
