// The table as one seat (or a spectator) sees it, drawn from a PlayerView (protobuf JSON). Player ids
// are drawn with nameEl (names.js), never put in a string with the text around them.
import { cardEl, cardsEl, sortCards } from "./cards.js";
import { nameEl, nameList } from "./names.js";

const PHASES = { PHASE_DRAW: "draw", PHASE_PLAY: "play", PHASE_DEAL_OVER: "deal over", PHASE_GAME_OVER: "game over" };

// The name shown per seat: the account's display name at seating (the player id in older games), with
// a marker for programs.
export function names(view) {
  return (view.seats || []).map((s) => `${s.name || s.player_id}${s.bot ? " [bot]" : ""}`);
}

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function option(view, name) {
  const value = view.options && view.options[name];
  return value ? Number(value.int_value) : undefined;
}

// Contract rummy: the round being played, the rounds of this match, and the round's contract.
function contractOf(view, config) {
  const contracts = config.facts[view.variant].contracts;
  if (!contracts.length) return null;
  const first = option(view, "first_round") || 1;
  const last = option(view, "last_round") || contracts.length;
  const round = first + view.deal - 1;
  return { round, first, last, contract: contracts[round - 1] || "?" };
}

// What a person must know of the rules now that the moves alone do not say.
export function rulesNote(view, config, you) {
  const contract = contractOf(view, config);
  if (contract) {
    const rounds = contract.first === contract.last ? "a one-round match" : `rounds ${contract.first}-${contract.last}`;
    const buys = you !== null && view.buys && view.buys.length ? ` You have bought ${view.buys[you]} card(s) this round.` : "";
    const noBuy = contract.round === 8 ? " No buying in round 8." : "";
    return `Round ${contract.round} (${rounds}): contract ${contract.contract}. Your first laydown is exactly the contract; ` +
      `after it you may only lay off.${noBuy}${buys}`;
  }
  if (config.facts[view.variant].spread_pile) {
    return "Any card of the discard pile may be picked, with every card above it, if you meld or lay it off at once: " +
      "click a card of the pile to see its uses.";
  }
  const opening = option(view, "opening_min_points") ?? config.facts[view.variant].opening;
  if (opening && you !== null && view.opened && !view.opened[you]) {
    return `You have not opened yet: your first melds must total at least ${opening} points, and only then may you lay off.`;
  }
  return "";
}

// The table's public part: header, seats, piles, buy offer and melds, into the given elements.
export function drawTable(view, els, config, you = null) {
  const players = names(view);
  const over = view.phase === "PHASE_DEAL_OVER" || view.phase === "PHASE_GAME_OVER";
  const contract = contractOf(view, config);
  els.info.replaceChildren(`${view.variant} · deal ${view.deal} · ${PHASES[view.phase] || view.phase}` +
    (contract ? ` · round ${contract.round}: contract ${contract.contract}` : ""),
  ...(over ? [] : [" · ", nameEl(players[view.turn]), " to move"]));
  const timer = el("span", "timer");
  timer.id = "timer";
  timer.dataset.deadline = view.turn_deadline || "";
  els.info.append(" ", timer);

  els.seats.replaceChildren(...(view.seats || []).map((seat, i) => {
    const box = el("div", "seat" + (i === view.turn && !over ? " turn" : "") + (i === you ? " you" : ""));
    const flags = [view.opened && view.opened[i] ? "opened" : "", seat.away ? "away (engine plays)" : "",
      view.active && view.active[i] === false ? "out" : ""].filter(Boolean).join(", ");
    box.append(nameEl(names(view)[i]), `${i === you ? " (you)" : ""} · ${view.hand_sizes[i]} cards · ` +
      `score ${view.totals[i] ?? 0}` + (contract && view.buys && view.buys.length ? ` · buys ${view.buys[i]}` : "") +
      (flags ? ` · ${flags}` : ""));
    return box;
  }));

  els.stock.replaceChildren(el("div", "", `Stock: ${view.stock_size} cards`));
  const pile = el("div", "", `Discard pile (${view.discard_size})`);
  if ((view.discard_pile || []).length) {
    const whole = el("span", "whole-pile");
    view.discard_pile.forEach((card, index) => {
      const node = cardEl(card);
      node.dataset.index = `${index}`;
      whole.append(node);
    });
    els.discard.replaceChildren(pile, whole);
  } else {
    els.discard.replaceChildren(pile, view.discard_top ? cardEl(view.discard_top) : el("span", "", "empty"));
  }

  els.offer.textContent = "";
  els.offer.hidden = !(view.offer && view.offer.rank !== undefined && contract);
  if (!els.offer.hidden) {
    const from = view.offer_from !== undefined ? [" discarded by ", nameEl(players[view.offer_from])] : [" (the upcard)"];
    const asked = view.buy_request !== undefined ? [" · ", nameEl(players[view.buy_request]), " asked to buy it"] : [];
    els.offer.append("Buy window: ", cardEl(view.offer), ...from, " is on offer until ", nameEl(players[view.turn]),
      " draws", ...asked);
  }

  els.melds.replaceChildren(...(view.melds || []).map((m) => {
    const box = el("div", "meld");
    box.append(`${m.index + 1}. `, nameEl(players[m.owner]), ": ", cardsEl(m.meld.cards));
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

// The end of a deal or of the game, from the view (and scoring's result once it has one): each line
// the nodes to append.
export function resultLines(view) {
  const players = names(view);
  const rows = players.map((p, i) => [nameEl(p),
    `: ${view.last_penalties && view.last_penalties.length ? view.last_penalties[i] : 0} this deal, ${view.totals[i] ?? 0} in all`]);
  if (view.phase === "PHASE_GAME_OVER") {
    const winners = nameList((view.winners || []).map((s) => players[s]));
    return [["Game over — winner: ", ...(winners.length ? winners : ["nobody"])], ...rows];
  }
  return [[`Deal ${view.deal} over`], ...rows];
}

export function tickTimers() {
  const timer = document.getElementById("timer");
  if (!timer || !timer.dataset.deadline) { if (timer) timer.textContent = ""; return; }
  const left = Math.max(0, Math.round((Date.parse(timer.dataset.deadline) - Date.now()) / 1000));
  timer.textContent = `· ${left} s left`;
}
