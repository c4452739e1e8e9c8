// The replay viewer: a finished game's history (GetHistory), the table at each step (GetStateAt, which
// shows every hand once the game is over), all hands or one seat's, engine-played moves marked, and
// the shuffle's verification (VerifyShuffle).
import { call } from "./api.js";
import { cardsEl, eventLine } from "./cards.js";
import { drawTable } from "./table.js";

const $ = (id) => document.getElementById(id);

export async function openReplay(gameId, contracts, say) {
  let history;
  let check;
  try {
    [history, check] = await Promise.all([
      call("GET", `/api/games/${gameId}/history`),
      call("GET", `/api/games/${gameId}/verify`),
    ]);
  } catch (err) {
    say(`No replay: ${err.message}`, true);
    return;
  }
  const entries = history.entries;
  const players = history.seats.map((s) => s.player_id);
  const states = new Map();
  let at = 0;

  $("replay-info").textContent = `Game ${gameId}: ${players.join(", ")} · ${entries.length} events · ` +
    `${entries.filter((e) => e.by_timer).length} played by the engine`;
  const verify = $("verify");
  verify.className = `verify ${check.verified ? "ok" : "bad"}`;
  verify.textContent = check.verified
    ? `✔ Shuffle verified: the revealed seed matches the commitment ${check.seed_commitment.slice(0, 16)}… and re-deals all ${check.shuffles.length} deals and reshuffles`
    : `✘ Shuffle NOT verified (commitment ${check.commitment_matches ? "matches" : "does not match"})`;

  $("replay-seat").replaceChildren(new Option("all hands", "all"), ...players.map((p, i) => new Option(`${p}'s view`, `${i}`)));
  $("replay-log").replaceChildren(...entries.map((entry, i) => {
    const li = document.createElement("li");
    li.textContent = `seq ${entry.event.seq} · ${eventLine(entry.event, players)}`;
    if (entry.by_timer) {
      const tag = document.createElement("span");
      tag.className = "engine";
      tag.textContent = "engine played";
      li.append(" ", tag);
    }
    li.addEventListener("click", () => go(i));
    return li;
  }));

  async function stateAt(seq) {
    if (!states.has(seq)) states.set(seq, await call("GET", `/api/games/${gameId}/state?seq=${seq}`));
    return states.get(seq);
  }

  async function go(index) {
    at = Math.max(0, Math.min(entries.length - 1, index));
    const entry = entries[at];
    const state = await stateAt(entry.event.seq);
    $("replay-pos").textContent = `${at + 1} / ${entries.length}`;
    $("replay-event").textContent = `seq ${entry.event.seq}: ${eventLine(entry.event, players)}${entry.by_timer ? " (engine played)" : ""}`;
    const box = $("replay-table");
    box.replaceChildren();
    const parts = {};
    for (const name of ["info", "seats", "stock", "discard", "offer", "melds"]) {
      parts[name] = document.createElement("div");
      box.append(parts[name]);
    }
    const view = { ...state.view, discard_pile: state.discard_pile && state.discard_pile.length ? state.discard_pile : state.view.discard_pile };
    drawTable(view, parts, contracts);
    const seatChoice = $("replay-seat").value;
    for (const hand of state.hands || []) {
      if (seatChoice !== "all" && String(hand.seat) !== seatChoice) continue;
      const row = document.createElement("div");
      row.className = "replay-hand";
      row.append(`${players[hand.seat]}: `, cardsEl(hand.cards));
      box.append(row);
    }
    [...$("replay-log").children].forEach((li, i) => li.classList.toggle("current", i === at));
  }

  $("replay-first").onclick = () => go(0);
  $("replay-prev").onclick = () => go(at - 1);
  $("replay-next").onclick = () => go(at + 1);
  $("replay-last").onclick = () => go(entries.length - 1);
  $("replay-seat").onchange = () => go(at);
  await go(0);
}
