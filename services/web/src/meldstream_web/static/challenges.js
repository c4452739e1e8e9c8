// Challenges on the lobby: another account asked by its name to a game of two (the lobby's variant,
// match, turn time and time bank), the challenges to this account with accept and decline, and its own
// with cancel.
// The bot API's routes (docs/clients/http-api.md#challenges) with the session's cookies; the lists are
// drawn again on each of the account's events (its NDJSON stream, followed while the lobby is shown), and
// a challenge of ours accepted takes this page to its game when the game starts there. Names are text.
import { call, session } from "./api.js";
import { isolated, nameEl } from "./names.js";
import { t, tnodes } from "./i18n.js";
import { bankText } from "./private.js";

const $ = (id) => document.getElementById(id);
const EVENTS = "/api/v1/stream/event";
const RETRY_MS = 3000; // the event stream opened again after it drops
const LOOKS = 3; // a game start looked up again in the lists, a second apart (its accept is written then)
const NAME = 64; // the gateway's limit on an account name
let following = null; // the AbortController of the open event stream
let hooks = { say: () => {}, enter: () => {} };
let waiting = false; // a challenge of ours unanswered, or accepted and its game not entered, as last listed
const entered = new Set(); // the games of our challenges this page went to (once: the lobby is left alone)

// Follow the account's events while the lobby is shown. `say` reports; `enter(game, seat, variant)`
// takes the page to a game.
export function openChallenges(say, enter) {
  closeChallenges();
  hooks = { say, enter };
  const control = new AbortController();
  following = control;
  refresh();
  follow(control);
}

export function closeChallenges() {
  if (following) following.abort();
  following = null;
}

async function follow(control) {
  try {
    const response = await fetch(EVENTS, { credentials: "same-origin", signal: control.signal });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const lines = (buffer + value).split("\n");
      buffer = lines.pop();
      for (const line of lines) if (line.trim()) await happened(JSON.parse(line));
    }
  } catch { /* dropped, or closed: opened again below while the lobby is still shown */ }
  if (following === control) setTimeout(() => following === control && follow(control), RETRY_MS);
}

async function happened(event) {
  if (event.type === "gameStart") {
    if (!waiting) return; // no challenge of ours to be accepted: another game of the account
    for (let look = 0; look < LOOKS; look++) {
      const game = event.game.game_id;
      const mine = (await refresh()).out.find((c) => c.game_id && c.game_id === game && !entered.has(game));
      if (mine) { entered.add(game); hooks.enter(game, Number(event.game.seat), mine.variant); return; }
      if (look + 1 < LOOKS) await new Promise((done) => setTimeout(done, 1000));
    }
  } else if (event.type.startsWith("challenge")) await refresh();
}

// The lists drawn from the gateway's; answers them ({in, out}, empty when it could not say).
async function refresh() {
  let listed = { in: [], out: [] };
  try {
    listed = await call("GET", "/api/v1/challenge");
  } catch (err) { hooks.say(err.message, true); }
  if (!following) return listed;
  const open = listed.in.filter((c) => c.status === "created");
  const mine = listed.out.filter((c) => c.status === "created" || c.status === "declined");
  waiting = listed.out.some((c) => c.status === "created" || (c.status === "accepted" && !entered.has(c.game_id)));
  const focused = document.activeElement?.dataset?.action ? document.activeElement : null; // kept on redraw
  $("challenges-in").replaceChildren(...(open.length ? open.map(incoming) : [item(t("challenge.none_in"))]));
  $("challenges-out").replaceChildren(...(mine.length ? mine.map(outgoing) : [item(t("challenge.none_out"))]));
  if (focused) {
    const id = focused.closest("li")?.dataset.challenge;
    const again = [...document.querySelectorAll("#challenges button[data-action]")]
      .find((b) => b.dataset.action === focused.dataset.action && b.closest("li").dataset.challenge === id);
    again?.focus();
  }
  return listed;
}

function item(...parts) {
  const li = document.createElement("li");
  li.append(...parts);
  return li;
}

function button(text, c, verb) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.dataset.action = verb;
  b.addEventListener("click", () => answer(c, verb));
  return b;
}

function terms(c) {
  const turn = Number(c.turn_timeout_ms);
  return {
    variant: t(`variant.${c.variant}`),
    clock: (turn ? t("challenge.clock", { seconds: turn / 1000 }) : t("challenge.clock_standard")) + bankText(c.time_bank_ms),
  };
}

function incoming(c) {
  const who = [nameEl(c.challenger_name), ...(c.challenger_bot ? [t("table.bot_mark")] : [])];
  const li = item(...tnodes("challenge.from", { who, ...terms(c) }), " ");
  li.dataset.challenge = c.id;
  li.append(
    button(t("challenge.accept"), c, "accept"), " ", button(t("challenge.decline"), c, "decline"),
  );
  return li;
}

function outgoing(c) {
  const li = item(...tnodes("challenge.to", { who: nameEl(c.challenged_name), ...terms(c) }));
  li.dataset.challenge = c.id;
  if (c.status === "declined") li.append(t("challenge.declined"));
  else li.append(t("challenge.waiting"), " ", button(t("challenge.cancel"), c, "cancel"));
  return li;
}

async function answer(c, verb) {
  try {
    const done = await call("POST", `/api/v1/challenge/${encodeURIComponent(c.id)}/${verb}`, {});
    if (verb === "accept" && done.game_id) { // the challenger sits at seat 0
      entered.add(done.game_id);
      hooks.enter(done.game_id, 1, c.variant);
      return;
    }
  } catch (err) { hooks.say(err.message, true); }
  refresh();
}

// The form: the account found by its name, then challenged with the lobby's choices.
export async function challenge(name, settings) {
  const typed = name.trim().slice(0, NAME);
  if (!typed) return;
  let found;
  try {
    found = await call("GET", `/api/v1/accounts/${encodeURIComponent(typed)}`);
  } catch (err) {
    hooks.say(err.code === "no_account" ? t("challenge.no_account", { name: isolated(typed) }) : err.message, true);
    return;
  }
  if (found.player === session.player) { hooks.say(t("challenge.self"), true); return; }
  try {
    await call("POST", `/api/v1/challenge/${encodeURIComponent(found.player)}`, settings);
    hooks.say(t("challenge.sent", { who: isolated(found.display_name) }));
    $("challenge-name").value = "";
  } catch (err) { hooks.say(err.message, true); }
  refresh();
}
