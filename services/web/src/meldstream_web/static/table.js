// The table as one seat (or a spectator) sees it, drawn from a PlayerView (protobuf JSON). Player ids
// are drawn with nameEl (names.js), never put in a string with the text around them.
import { cardBack, cardEl, cardKey, cardName, cardSvg, cardText, cardsEl, spoken } from "./cards.js";
import { nameEl, nameList } from "./names.js";
import { t, tn, tnodes } from "./i18n.js";

const PHASES = ["PHASE_DRAW", "PHASE_PLAY", "PHASE_DEAL_OVER", "PHASE_GAME_OVER"];

// The name shown per seat: the account's display name at seating (the player id in older games), with
// a marker for programs.
export function names(view) {
  return (view.seats || []).map((s) => `${s.name || s.player_id}${s.bot ? t("table.bot_mark") : ""}`);
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
    const rounds = contract.first === contract.last ? t("rules.one_round") : t("rules.rounds", { first: contract.first, last: contract.last });
    const buys = you !== null && view.buys && view.buys.length ? tn("rules.bought", view.buys[you]) : "";
    const noBuy = contract.round === 8 ? t("rules.no_buying_8") : "";
    return t("rules.contract", { round: contract.round, rounds, contract: contract.contract }) + noBuy + buys;
  }
  if (config.facts[view.variant].spread_pile) {
    return t("rules.spread_pile");
  }
  const opening = option(view, "opening_min_points") ?? config.facts[view.variant].opening;
  if (opening && you !== null && view.opened && !view.opened[you]) {
    return tn("rules.not_opened", opening);
  }
  return "";
}

// A box that is a button for a player (`you` a seat) and plain for a spectator.
function control(you, cls, id) {
  const node = el(you === null ? "div" : "button", cls);
  if (you !== null) node.type = "button";
  if (id) node.id = id;
  return node;
}

// The table's public part: header, seats (each with its clock), the stock and the pile (buttons for a
// player: the page gives them their moves), the buy window and the melds, into the given elements.
export function drawTable(view, els, config, you = null) {
  const players = names(view);
  const over = view.phase === "PHASE_DEAL_OVER" || view.phase === "PHASE_GAME_OVER";
  const contract = contractOf(view, config);
  const seeding = view.phase === "PHASE_DEAL_OVER" && !Number(view.deal || 0); // before the first deal
  const phase = PHASES.includes(view.phase) ? t(`phase.${view.phase}`) : view.phase;
  const info = seeding ? t("table.info_seeding", { variant: view.variant }) : t("table.info", { variant: view.variant, deal: view.deal, phase });
  els.info.replaceChildren(info +
    (contract ? t("table.info_round", { round: contract.round, contract: contract.contract }) : ""),
  ...(over ? [] : tnodes("table.to_move", { who: nameEl(players[view.turn]) })));
  const timer = el("span", "timer");
  timer.id = "timer";
  timer.dataset.deadline = over ? "" : view.turn_deadline || "";
  els.info.append(" ", timer);

  els.seats.replaceChildren(...(view.seats || []).map((seat, i) => {
    const moving = i === view.turn && !over;
    const box = el("div", "seat" + (moving ? " turn" : "") + (i === you ? " you" : ""));
    const forfeited = seat.presence === "SEAT_PRESENCE_FORFEITED";
    const flags = [view.opened && view.opened[i] ? t("seat.opened") : "", seat.away ? t("seat.away") : "",
      forfeited ? t("seat.forfeited") : view.active && view.active[i] === false ? t("seat.out") : ""]
      .filter(Boolean).join(t("list.separator"));
    box.append(nameEl(players[i]), `${i === you ? t("seat.you") : ""} · ${tn("seat.cards", view.hand_sizes[i] ?? 0)} · ` +
      t("seat.score", { score: view.totals[i] ?? 0 }) + (contract && view.buys && view.buys.length ? t("seat.buys", { buys: view.buys[i] }) : "") +
      (flags ? ` · ${flags}` : ""));
    // Each seat's clock: it runs for the seat to move (the engine's deadline), empty for the others.
    const clock = el("span", "clock" + (moving ? " running" : ""));
    clock.dataset.deadline = moving ? view.turn_deadline || "" : "";
    box.append(" ", clock);
    // The seat's time bank left, beside its clock (tables without a bank show none).
    if (Number(seat.bank_left_ms || 0) > 0) {
      const bank = el("span", "bank", t("seat.bank", { time: minutes(Number(seat.bank_left_ms || 0) / 1000) }));
      bank.id = `bank-${i}`;
      box.append(" ", bank);
    }
    // A disconnected player: "Bo disconnected, 25 s", counting down to the grace's end (tickTimers).
    if (seat.presence === "SEAT_PRESENCE_DISCONNECTED" && !over) {
      const gone = el("span", "presence");
      gone.id = `presence-${i}`;
      gone.setAttribute("role", "status");
      gone.dataset.until = seat.grace_ends_at || "";
      gone.dataset.name = players[i];
      drawPresence(gone);
      box.append(gone);
    }
    return box;
  }));

  const stock = control(you, "pile-card stock", you === null ? "" : "draw-stock");
  stock.append(cardBack(), el("span", "pile-label", t("table.stock", { count: view.stock_size })));
  if (you !== null) stock.append(spoken(tn("table.stock_spoken", view.stock_size)));
  els.stock.replaceChildren(stock);
  const pileLabel = el("div", "pile-label", t("table.pile", { count: view.discard_size }));
  if ((view.discard_pile || []).length) {
    const whole = el("span", "whole-pile");
    view.discard_pile.forEach((card, index) => {
      const node = cardEl(card, you === null ? "span" : "button");
      node.dataset.index = `${index}`;
      if (you !== null) {
        node.type = "button";
        node.append(spoken(t("table.pile_card", { card: cardName(card), place: index + 1 })));
      }
      whole.append(node);
    });
    els.discard.replaceChildren(pileLabel, whole);
  } else {
    const top = control(you, "pile-card top", you === null ? "" : "take-discard");
    top.append(view.discard_top ? cardSvg(view.discard_top) : el("span", "empty", t("table.empty")));
    if (view.discard_top) top.dataset.card = cardKey(view.discard_top);
    const label = view.discard_top ? t("table.pile_top", { card: cardName(view.discard_top) }) : t("table.pile_empty");
    if (you === null) { top.setAttribute("role", "img"); top.setAttribute("aria-label", label); }
    else top.append(spoken(label));
    els.discard.replaceChildren(pileLabel, top);
  }

  els.offer.replaceChildren();
  els.offer.hidden = !(view.offer && view.offer.rank !== undefined && contract);
  if (!els.offer.hidden) {
    const from = view.offer_from !== undefined ? tnodes("offer.from", { who: nameEl(players[view.offer_from]) }) : [t("offer.upcard")];
    const asked = view.buy_request !== undefined ? tnodes("offer.asked", { who: nameEl(players[view.buy_request]) }) : [];
    const line = el("p", "offer-line");
    line.append(...tnodes("offer.line", { card: el("b", "", cardText(view.offer)), from, until: nameEl(players[view.turn]) }),
      ...asked);
    const clock = el("span", "clock running");
    clock.id = "offer-clock";
    clock.dataset.deadline = view.turn_deadline || "";
    const row = el("div", "offer-row");
    row.id = "offer-row";
    row.append(cardEl(view.offer), clock);
    els.offer.append(line, row);
  }

  els.melds.replaceChildren(...(view.melds || []).map((m) => {
    const box = control(you, "meld");
    box.dataset.meld = `${m.index}`;
    const owner = el("span", "meld-owner", `${m.index + 1}. `);
    owner.append(nameEl(players[m.owner]));
    box.append(owner, cardsEl(m.meld.cards, "meld-cards"));
    box.prepend(spoken(t("table.meld_spoken", { meld: m.index + 1 })));
    return box;
  }));
  if (!(view.melds || []).length) els.melds.replaceChildren(el("span", "note", t("table.no_melds")));
}

// The end of a deal or of the game, from the view (and scoring's result once it has one): each line
// the nodes to append.
export function resultLines(view) {
  const players = names(view);
  const rows = players.map((p, i) => [nameEl(p),
    t("result.row", { deal: view.last_penalties && view.last_penalties.length ? view.last_penalties[i] : 0, total: view.totals[i] ?? 0 })]);
  if (view.phase === "PHASE_GAME_OVER") {
    const winners = nameList((view.winners || []).map((s) => players[s]));
    return [[t("result.game_over"), ...(winners.length ? winners : [t("result.nobody")])], ...rows];
  }
  return [[t("result.deal_over", { deal: view.deal })], ...rows];
}

function minutes(seconds) {
  const whole = Math.max(0, Math.round(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

// A disconnected seat's line: the grace's seconds left, then that the engine plays for it.
function drawPresence(node) {
  const left = Math.max(0, Math.round((Date.parse(node.dataset.until) - Date.now()) / 1000));
  const who = nameEl(node.dataset.name || "");
  node.replaceChildren(...(left > 0 ? tnodes("seat.disconnected", { who, left }) : tnodes("seat.disconnected_auto", { who })));
}

// Every clock on the page, from its deadline: seconds left, marked low in the last ten.
export function tickTimers() {
  for (const node of document.querySelectorAll(".presence[data-until]")) drawPresence(node);
  for (const clock of document.querySelectorAll("#timer, .clock[data-deadline]")) {
    const deadline = clock.dataset.deadline;
    if (!deadline) { if (clock.id === "timer") clock.textContent = ""; continue; }
    const left = Math.max(0, Math.round((Date.parse(deadline) - Date.now()) / 1000));
    clock.textContent = clock.id === "timer" ? t("table.seconds_left", { left }) : `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    clock.classList.toggle("low", left <= 10);
  }
}
