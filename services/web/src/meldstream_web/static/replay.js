// The replay viewer reads a finished game's replay export (docs/replay-export.md), the document
// `meldstream replay --format json` writes, served by the gateway from the engine's history: step
// forward and back, every hand or one seat's view (that seat's export), engine-played moves marked,
// refused commands where the export has them, and the shuffle's verification (VerifyShuffle).
import { call } from "./api.js";
import { cardEl, cardOfText, eventLine } from "./cards.js";
import { isolated, nameEl, nameList } from "./names.js";
import { el } from "./table.js";
import { t, tn, tnodes } from "./i18n.js";

const $ = (id) => document.getElementById(id);

const cardsOf = (texts) => {
  const box = el("span", "cards");
  for (const text of texts) box.append(cardEl(cardOfText(text)));
  return box;
};

// The name shown at seating for each seat (the id in an export without names).
const seatNames = (s) => s.players.map((id, i) => (s.names && s.names[i]) || id);

// The summary's lines as nodes, for the <pre> (names as elements between the text).
function summaryNodes(doc) {
  const s = doc.summary;
  const players = seatNames(s);
  const away = s.away_periods.length;
  const refused = doc.refused.length;
  const each = (f) => players.flatMap((p, i) => [...(i ? [", "] : []), ...f(p, i)]);
  const winners = nameList(s.winners.map((id) => players[s.players.indexOf(id)] ?? id));
  return [
    t("replay.game", { game: doc.game_id, variant: s.variant }), ...each((p, i) => [`${i} `, nameEl(p)]), "\n",
    ...tnodes("replay.winner", { winners: winners.length ? winners : [t("replay.none")],
      totals: each((p, i) => [nameEl(p), ` ${s.totals[i]}`]) }), "\n",
    t("replay.times", { started: s.started_at, ended: s.ended_at || "—", seconds: s.duration_s.toFixed(1) }) +
      tn("replay.events_count", s.events) + tn("replay.deals_count", s.deals) + "\n",
    t("replay.turn_limit", { limit: s.turn_limit_in_force_ms ? `${s.turn_limit_in_force_ms / 1000} s` : t("replay.none") }) +
      tn("replay.timeouts", s.timeouts.length) + tn("replay.away", away) + tn("replay.by_engine", s.engine_played_events) +
      tn("replay.refused", refused) + "\n",
    t("replay.shown", { shown: doc.shown }),
  ];
}

function refusalLine(refusal, players, tag = "li") {
  const line = el(tag, "refused", `${refusal.time.slice(11, 23)} · `);
  line.append(nameEl(players[refusal.seat] ?? refusal.player), t("replay.refusal", { code: refusal.code, message: refusal.message }));
  return line;
}

function drawState(entry, players, box) {
  const state = entry.state;
  const phase = t(`replay.phase.${state.phase}`);
  const info = el("div", "info", t("replay.info", { deal: state.deal, phase: phase.startsWith("replay.") ? state.phase.replace("_", " ") : phase }));
  info.append(...tnodes("replay.to_move", { who: nameEl(players[state.turn]) }));
  box.replaceChildren(info);
  const seats = el("div", "seats");
  state.hand_sizes.forEach((size, i) => {
    const away = state.away[i] ? t("replay.seat_away") : "";
    const seat = el("div", "seat" + (i === state.turn ? " turn" : ""));
    seat.append(nameEl(players[i]), ` · ${tn("seat.cards", size)} · ${t("seat.score", { score: state.totals[i] })}${away}`);
    seats.append(seat);
  });
  const piles = el("div", "piles");
  const stock = el("div", "pile", tn("replay.stock", state.stock_size));
  const discard = el("div", "pile");
  discard.append(el("div", "", t("table.pile", { count: state.discard.length })), cardsOf(state.discard));
  piles.append(stock, discard);
  const melds = el("div", "melds");
  state.melds.forEach((meld, i) => {
    const row = el("div", "meld", `${i + 1}. `);
    row.append(nameEl(players[meld.owner]), ": ", cardsOf(meld.cards));
    melds.append(row);
  });
  box.append(seats, piles, melds);
  state.hands.forEach((hand, i) => {
    if (hand === null) return; // hidden in this view
    const row = el("div", "replay-hand");
    row.append(nameEl(players[i]), ": ", cardsOf(hand));
    box.append(row);
  });
}

export async function openReplay(gameId, say) {
  const exports = new Map(); // "all" or a seat number -> that view's export
  const exportOf = async (choice) => {
    if (!exports.has(choice)) {
      const query = choice === "all" ? "" : `?seat=${choice}`;
      exports.set(choice, await call("GET", `/api/games/${gameId}/export${query}`));
    }
    return exports.get(choice);
  };
  let doc;
  let check;
  try {
    [doc, check] = await Promise.all([exportOf("all"), call("GET", `/api/games/${gameId}/verify`)]);
  } catch (err) {
    say(t("replay.none_found", { reason: err.message }), true);
    return;
  }
  const players = seatNames(doc.summary);
  const count = doc.events.length;
  let at = 0;

  $("replay-summary").replaceChildren(...summaryNodes(doc));
  const verify = $("verify");
  verify.className = `verify ${check.verified ? "ok" : "bad"}`;
  verify.textContent = check.verified
    ? t("replay.verified", { commitment: check.seed_commitment.slice(0, 16), count: check.shuffles.length })
    : t(check.commitment_matches ? "replay.not_verified_matches" : "replay.not_verified");
  const download = $("replay-download");
  URL.revokeObjectURL(download.href);
  download.href = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 1)], { type: "application/json" }));
  download.download = `${gameId}.replay.json`;

  $("replay-seat").replaceChildren(new Option(t("replay.all_hands"), "all"), ...players.map((p, i) => new Option(t("replay.view_of", { who: isolated(p) }), `${i}`)));
  const refusedAfter = (seq) => doc.refused.filter((r) => r.after_seq === seq);
  const items = [];
  for (const [i, entry] of doc.events.entries()) {
    const li = el("li", "", `${entry.time.slice(11, 23)} · seq ${entry.seq} · `);
    li.append(...eventLine(entry.type, entry.event, players));
    if (entry.by_engine) li.append(" ", el("span", "engine", t("replay.engine_played")));
    li.addEventListener("click", () => go(i));
    items.push(li);
  }
  const refusals = doc.refused.filter((r) => !doc.events.some((e) => e.seq === r.after_seq)).map((r) => refusalLine(r, players));
  $("replay-log").replaceChildren(...refusals, ...items.flatMap((li, i) => [li, ...refusedAfter(doc.events[i].seq).map((r) => refusalLine(r, players))]));

  async function go(index) {
    at = Math.max(0, Math.min(count - 1, index));
    const shown = await exportOf($("replay-seat").value);
    const entry = shown.events[at];
    $("replay-pos").textContent = `${at + 1} / ${count}`;
    const line = $("replay-event");
    line.replaceChildren(`${entry.time} · seq ${entry.seq}: `, ...eventLine(entry.type, entry.event, players));
    if (entry.by_engine) line.append(" ", el("span", "engine", t("replay.engine_played")));
    for (const refusal of refusedAfter(entry.seq)) line.append(refusalLine(refusal, players, "div"));
    drawState(entry, players, $("replay-table"));
    items.forEach((li, i) => li.classList.toggle("current", i === at));
  }

  $("replay-first").onclick = () => go(0);
  $("replay-prev").onclick = () => go(at - 1);
  $("replay-next").onclick = () => go(at + 1);
  $("replay-last").onclick = () => go(count - 1);
  $("replay-seat").onchange = () => go(at).catch((err) => say(err.message, true));
  await go(0);
}
