// Private tables: the host invites by a link the platform makes (#/table/TOKEN), and by a short code
// to read aloud (then the host approves each seat). The table page asks matchmaking again every
// second: who has joined, who asks, the game once the seats are full. Each seated player's page moves
// to the game when it starts, and comes back here (the link) for a rematch. Every name is text.
import { call, session } from "./api.js";
import { nameEl } from "./names.js";
import { t, tn, tnodes } from "./i18n.js";

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

// A table's time bank in words; none said for the server's default (absent or null).
export function bankText(ms) {
  if (ms === undefined || ms === null) return "";
  return Number(ms) ? t("clock.time_bank", { seconds: Number(ms) / 1000 }) : t("clock.no_bank");
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
  $("private-info").textContent = t("private.looking");
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
      ? t("private.no_table")
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
  $("private-info").textContent = tn("private.info", Number(table.seats), { variant: table.variant, taken: table.players.length }) +
    (Number(table.turn_timeout_ms) ? t("private.turn_time", { seconds: Number(table.turn_timeout_ms) / 1000 }) : "") +
    bankText(table.time_bank_ms) +
    (games ? t("private.game", { game: games }) : t("private.waiting", { expires }));
  $("private-link").value = `${location.origin}/#/table/${table.table_id}`;
  $("private-code").hidden = !table.short_code;
  $("private-code-text").textContent = table.short_code;
  $("private-players").replaceChildren(...table.players.map((p, seat) => {
    const li = document.createElement("li");
    li.append(...tnodes("private.seat", { seat: seat + 1, who: nameEl(p.name) }), p.bot ? t("table.bot_mark") : "",
      p.player_id === table.host ? t("private.host") : "");
    if (games && table.game_over) li.append(p.rematch ? t("private.wants_rematch") : "");
    if (host && !games && p.player_id !== table.host) {
      li.append(" ", button(`remove-${seat}`, t("private.remove"), () => act(`${base}/remove`, { player_id: p.player_id }, say)));
    }
    return li;
  }));
  $("private-asking").replaceChildren(...table.asking.map((p, i) => {
    const li = document.createElement("li");
    li.append(...tnodes("private.asks", { who: nameEl(p.name) }));
    if (host) {
      li.append(" ", button(`approve-${i}`, t("private.approve"), () => act(`${base}/approve`, { player_id: p.player_id }, say)),
        " ", button(`refuse-${i}`, t("private.refuse"), () => act(`${base}/remove`, { player_id: p.player_id }, say)));
    } else li.append(t("private.asking_wait"));
    return li;
  }));
  const actions = [];
  const asking = table.asking.some((p) => p.player_id === session.player);
  if (!seated && !asking && !games) actions.push(button("private-join", table.approval ? t("private.ask") : t("private.join"), () => act(`${base}/join`, undefined, say)));
  if (seated && !host && !games) actions.push(button("private-leave", t("private.leave"), () => act(`${base}/remove`, { player_id: session.player }, say)));
  if (seated && table.game_over) {
    const mine = table.players[table.your_seat];
    if (!mine.rematch) actions.push(button("rematch", t("private.rematch"), () => act(`${base}/rematch`, undefined, say)));
    else actions.push(t("private.rematch_wait"));
  }
  if (seated && table.game_id && table.game_over) {
    const last = document.createElement("a");
    last.href = `#/replay/${table.game_id}`;
    last.textContent = t("private.replay_last");
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
  a.textContent = t("private.back");
  return a;
}
