// The table as one seat (or a spectator) sees it, drawn from a PlayerView (protobuf JSON).
import { cardEl, cardsEl, cardText, sortCards } from "./cards.js";

const PHASES = { PHASE_DRAW: "draw", PHASE_PLAY: "play", PHASE_DEAL_OVER: "deal over", PHASE_GAME_OVER: "game over" };

export function names(view) {
  return (view.seats || []).map((s) => s.player_id);
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function contractOf(view, contracts) {
  if (view.variant !== "contract") return "";
  const first = view.options && view.options.first_round ? Number(view.options.first_round.int_value) : 1;
  const round = first + view.deal - 1;
  return contracts[round - 1] ? ` · round ${round}: contract ${contracts[round - 1]}` : "";
}

// The table's public part: header, seats, piles, buy offer and melds, into the given elements.
export function drawTable(view, els, contracts, you = null) {
  const players = names(view);
  const over = view.phase === "PHASE_DEAL_OVER" || view.phase === "PHASE_GAME_OVER";
  els.info.textContent = `${view.variant} · deal ${view.deal} · ${PHASES[view.phase] || view.phase}` +
    contractOf(view, contracts) + (over ? "" : ` · ${players[view.turn]} to move`);
  const timer = el("span", "timer");
  timer.id = "timer";
  timer.dataset.deadline = view.turn_deadline || "";
  els.info.append(" ", timer);

  els.seats.replaceChildren(...(view.seats || []).map((seat, i) => {
    const box = el("div", "seat" + (i === view.turn && !over ? " turn" : "") + (i === you ? " you" : ""));
    const flags = [view.opened && view.opened[i] ? "opened" : "", seat.away ? "away (engine plays)" : "",
      view.active && view.active[i] === false ? "out" : ""].filter(Boolean).join(", ");
    box.textContent = `${seat.player_id}${i === you ? " (you)" : ""} · ${view.hand_sizes[i]} cards · ` +
      `score ${view.totals[i] ?? 0}` + (view.variant === "contract" && view.buys && view.buys.length ? ` · buys ${view.buys[i]}` : "") +
      (flags ? ` · ${flags}` : "");
    return box;
  }));

  els.stock.replaceChildren(el("div", "", `Stock: ${view.stock_size} cards`));
  const pile = el("div", "", `Discard pile (${view.discard_size})`);
  if ((view.discard_pile || []).length) {
    els.discard.replaceChildren(pile, cardsEl(view.discard_pile, "whole-pile"));
  } else {
    els.discard.replaceChildren(pile, view.discard_top ? cardEl(view.discard_top) : el("span", "", "empty"));
  }

  els.offer.textContent = "";
  if (view.offer && view.offer.rank !== undefined && view.variant === "contract") {
    const from = view.offer_from !== undefined ? ` discarded by ${players[view.offer_from]}` : " (the upcard)";
    const asked = view.buy_request !== undefined ? ` · ${players[view.buy_request]} asked to buy` : "";
    els.offer.textContent = `Buy window: ${cardText(view.offer)}${from} is on offer${asked}`;
  }

  els.melds.replaceChildren(...(view.melds || []).map((m) => {
    const box = el("div", "meld");
    box.append(`${m.index + 1}. ${players[m.owner]}: `, cardsEl(m.meld.cards));
    return box;
  }));
  if (!(view.melds || []).length) els.melds.textContent = "none yet";
}

export function drawHand(target, hand, byRank, onCard) {
  target.replaceChildren(...sortCards(hand || [], byRank).map((card) => {
    const node = cardEl(card);
    node.draggable = true;
    node.addEventListener("click", () => onCard(card));
    node.addEventListener("dragstart", (e) => e.dataTransfer.setData("text/plain", JSON.stringify(card)));
    return node;
  }));
}

// The end of a deal or of the game, from the view (and scoring's result once it has one).
export function resultText(view) {
  const players = names(view);
  const rows = players.map((p, i) => `${p}: ${view.last_penalties && view.last_penalties.length ? view.last_penalties[i] : 0} this deal, ${view.totals[i] ?? 0} in all`);
  if (view.phase === "PHASE_GAME_OVER") {
    const winners = (view.winners || []).map((s) => players[s]).join(", ") || "nobody";
    return [`Game over — winner: ${winners}`, ...rows];
  }
  return [`Deal ${view.deal} over`, ...rows];
}

export function tickTimers() {
  const timer = document.getElementById("timer");
  if (!timer || !timer.dataset.deadline) { if (timer) timer.textContent = ""; return; }
  const left = Math.max(0, Math.round((Date.parse(timer.dataset.deadline) - Date.now()) / 1000));
  timer.textContent = `· ${left} s left`;
}
