// Private tables: the host invites by a link the platform makes (#/table/TOKEN), and by a short code
// to read aloud (then the host approves each seat). The table page asks matchmaking again every
// second: who has joined, who asks, the game once the seats are full. Each seated player's page moves
// to the game when it starts, and comes back here (the link) for a rematch. Every name is text.
import { call, session } from "./api.js";
import { nameEl } from "./names.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;
let timer = null;
let shown = ""; // the table on the page
const TABLES = "meldstream.tables"; // game id -> its private table, for the way back after the game

export function tableOf(gameId) {
  return JSON.parse(localStorage.getItem(TABLES) || "{}")[gameId] || "";
}

function rememberTable(gameId, tableId) {
  const tables = JSON.parse(localStorage.getItem(TABLES) || "{}");
  tables[gameId] = tableId;
  const recent = Object.entries(tables).slice(-20); // a few recent games only
  localStorage.setItem(TABLES, JSON.stringify(Object.fromEntries(recent)));
}

export function closeTable() {
  clearTimeout(timer);
  timer = null;
  shown = "";
}

// The lobby's choices as a new table's settings; `say` reports a refusal.
export async function createTable(settings, say) {
  try {
    const table = await call("POST", "/api/tables", settings);
    location.hash = `#/table/${table.table_id}`;
  } catch (err) { say(err.message, true); }
}

export async function joinByCode(code, say) {
  try {
    const table = await call("POST", "/api/tables/by-code", { code });
    location.hash = `#/table/${table.table_id}`;
  } catch (err) { say(err.message, true); }
}

export function openTable(tableId, show, say) {
  closeTable();
  shown = tableId;
  show("private-page");
  $("private-info").textContent = "Looking for the table…";
  $("private-players").replaceChildren();
  $("private-asking").replaceChildren();
  $("private-actions").replaceChildren();
  refresh(tableId, say);
}

async function refresh(tableId, say) {
  let table;
  try {
    table = await call("GET", `/api/tables/${encodeURIComponent(tableId)}`);
  } catch (err) {
    if (shown !== tableId) return;
    $("private-info").textContent = err.code === "no_such_table"
      ? "No table has this link: it is mistyped, or its invite expired. Ask the host for a new one."
      : err.message;
    if (err.code !== "no_such_table") timer = setTimeout(() => refresh(tableId, say), POLL_MS);
    return;
  }
  if (shown !== tableId) return;
  draw(table, say);
  // A seated player's page moves to the game once it starts (and is back at it when the link is
  // opened again during the game: leave and return).
  if (table.game_id && table.your_seat >= 0 && !table.game_over) {
    rememberTable(table.game_id, tableId);
    location.hash = `#/play/${table.game_id}/${table.your_seat}`;
    return;
  }
  timer = setTimeout(() => refresh(tableId, say), POLL_MS);
}

function button(id, text, action) {
  const b = document.createElement("button");
  b.type = "button";
  b.id = id;
  b.textContent = text;
  b.addEventListener("click", action);
  return b;
}

async function act(path, body, say) {
  try {
    draw(await call("POST", path, body), say);
  } catch (err) { say(err.message, true); }
}

function draw(table, say) {
  const host = table.host === session.player;
  const seated = table.your_seat >= 0;
  const base = `/api/tables/${encodeURIComponent(table.table_id)}`;
  const expires = new Date(table.expires_at * 1000).toLocaleTimeString();
  const games = Number(table.games);
  $("private-info").textContent = `${table.variant} · ${table.players.length} of ${table.seats} seats taken` +
    (Number(table.turn_timeout_ms) ? ` · ${Number(table.turn_timeout_ms) / 1000} s a turn` : "") +
    (games ? ` · game ${games}` : ` · the game starts when every seat is taken; the invite expires at ${expires}`);
  $("private-link").value = `${location.origin}/#/table/${table.table_id}`;
  $("private-code").hidden = !table.short_code;
  $("private-code-text").textContent = table.short_code;
  $("private-players").replaceChildren(...table.players.map((p, seat) => {
    const li = document.createElement("li");
    li.append(`Seat ${seat + 1}: `, nameEl(p.name), p.bot ? " [bot]" : "", p.player_id === table.host ? " (host)" : "");
    if (games && table.game_over) li.append(p.rematch ? " · wants a rematch" : "");
    if (host && !games && p.player_id !== table.host) {
      li.append(" ", button(`remove-${seat}`, "Remove", () => act(`${base}/remove`, { player_id: p.player_id }, say)));
    }
    return li;
  }));
  $("private-asking").replaceChildren(...table.asking.map((p, i) => {
    const li = document.createElement("li");
    li.append(nameEl(p.name), " asks for a seat");
    if (host) {
      li.append(" ", button(`approve-${i}`, "Seat them", () => act(`${base}/approve`, { player_id: p.player_id }, say)),
        " ", button(`refuse-${i}`, "Refuse", () => act(`${base}/remove`, { player_id: p.player_id }, say)));
    } else li.append(": waiting for the host's answer");
    return li;
  }));
  const actions = [];
  const asking = table.asking.some((p) => p.player_id === session.player);
  if (!seated && !asking && !games) actions.push(button("private-join", table.approval ? "Ask the host for a seat" : "Join this table", () => act(`${base}/join`, undefined, say)));
  if (seated && !host && !games) actions.push(button("private-leave", "Leave", () => act(`${base}/remove`, { player_id: session.player }, say)));
  if (seated && table.game_over) {
    const mine = table.players[table.your_seat];
    if (!mine.rematch) actions.push(button("rematch", "Rematch (same players and settings)", () => act(`${base}/rematch`, undefined, say)));
    else actions.push("Waiting for the others to accept the rematch…");
  }
  if (seated && table.game_id && table.game_over) {
    const last = document.createElement("a");
    last.href = `#/replay/${table.game_id}`;
    last.textContent = "Replay the last game";
    actions.push(" ", last);
  }
  $("private-actions").replaceChildren(...actions);
}

// The way back to a private table from its game's result, for the rematch.
export function backToTable(gameId) {
  const tableId = tableOf(gameId);
  if (!tableId) return null;
  const a = document.createElement("a");
  a.href = `#/table/${tableId}`;
  a.id = "back-to-table";
  a.textContent = "Back to the table (rematch)";
  return a;
}
