// Cards and actions as a person reads them. Display only: which moves exist is the engine's answer.
import { nameEl, nameList } from "./names.js";
import { actionTable, t, tn, tnodes } from "./i18n.js";
import { label, order } from "./labels.js";

const SUITS = { SUIT_CLUBS: "♣", SUIT_DIAMONDS: "♦", SUIT_HEARTS: "♥", SUIT_SPADES: "♠" };
const RANKS = ["JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUIT_ORDER = ["SUIT_CLUBS", "SUIT_DIAMONDS", "SUIT_SPADES", "SUIT_HEARTS", "SUIT_UNSPECIFIED"];
// The replay export writes cards as text (docs/replay-export.md): rank, then C D H S; JK a joker.
const TEXT_SUITS = { C: "SUIT_CLUBS", D: "SUIT_DIAMONDS", H: "SUIT_HEARTS", S: "SUIT_SPADES" };

export function cardText(card) {
  if (!card || !card.rank) return "JK";
  return RANKS[card.rank] + (SUITS[card.suit] || "?");
}

// A card of the export's text ("10H", "JK") as the API's JSON card.
export function cardOfText(text) {
  if (text === "JK") return { rank: 0, suit: "SUIT_UNSPECIFIED" };
  return { rank: RANKS.indexOf(text.slice(0, -1)), suit: TEXT_SUITS[text.slice(-1)] };
}

export function sameCard(a, b) {
  return a && b && (a.rank || 0) === (b.rank || 0) && (a.suit || "SUIT_UNSPECIFIED") === (b.suit || "SUIT_UNSPECIFIED");
}

const SVG = "http://www.w3.org/2000/svg";
const SUIT_CLASS = { SUIT_CLUBS: "s-c", SUIT_DIAMONDS: "s-d", SUIT_HEARTS: "s-h", SUIT_SPADES: "s-s" };

const isJoker = (card) => !card || !card.rank;

// A card as a screen reader says it: "7 of hearts", "queen of spades", "joker".
export function cardName(card) {
  if (isJoker(card)) return t("card.joker");
  const suit = SUITS[card.suit] ? t(`card.suit.${card.suit}`) : t("card.no_suit");
  return t("card.name", { rank: card.rank > 1 && card.rank < 11 ? RANKS[card.rank] : t(`card.rank.${card.rank}`), suit });
}

// A card as a short key ("7H", "10S", "JK"), the same for both copies of a two-deck card.
export function cardKey(card) {
  if (isJoker(card)) return "JK";
  return RANKS[card.rank] + (card.suit || "SUIT_?").slice(5, 6);
}

function svgNode(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, `${value}`);
  if (text !== undefined) node.textContent = text;
  return node;
}

// The corner index (rank over suit), drawn top left and, turned, bottom right.
function corner(rank, suit) {
  const g = svgNode("g", { class: "ink" });
  g.append(svgNode("text", { x: 7.5, y: 15, "font-size": rank === "10" ? 11 : 13, "font-weight": 700, "text-anchor": "middle" }, rank));
  if (suit) g.append(svgNode("text", { x: 7.5, y: 26, "font-size": 11, "text-anchor": "middle" }, suit));
  return g;
}

// A card's face as an SVG drawing (built node by node: no markup is parsed), 50 x 70 units; its colours
// come from the style sheet by suit (two or four colours).
export function cardSvg(card) {
  const svg = svgNode("svg", { viewBox: "0 0 50 70", class: "card-svg", "aria-hidden": "true", focusable: "false" });
  svg.append(svgNode("rect", { x: 0.75, y: 0.75, width: 48.5, height: 68.5, rx: 4.5, class: "face" }));
  if (isJoker(card)) {
    svg.classList.add("s-j");
    const g = svgNode("g", { class: "ink" });
    [..."JOKER"].forEach((letter, i) => g.append(svgNode("text", { x: 7, y: 12 + i * 9, "font-size": 8.5, "font-weight": 700, "text-anchor": "middle" }, letter)));
    g.append(svgNode("text", { x: 28, y: 46, "font-size": 28, "text-anchor": "middle" }, "★"));
    svg.append(g);
    return svg;
  }
  svg.classList.add(SUIT_CLASS[card.suit] || "s-x");
  const rank = RANKS[card.rank];
  const suit = SUITS[card.suit] || "?";
  svg.append(corner(rank, suit));
  const turned = corner(rank, suit);
  turned.setAttribute("transform", "rotate(180 25 35)");
  svg.append(turned);
  const middle = svgNode("g", { class: "ink" });
  if (card.rank > 10) {
    middle.append(svgNode("rect", { x: 13, y: 14, width: 24, height: 42, rx: 2, class: "court" }));
    middle.append(svgNode("text", { x: 25, y: 38, "font-size": 19, "font-weight": 700, "text-anchor": "middle" }, rank));
    middle.append(svgNode("text", { x: 25, y: 52, "font-size": 11, "text-anchor": "middle" }, suit));
  } else {
    middle.append(svgNode("text", { x: 25, y: 45, "font-size": card.rank === 1 ? 30 : 24, "text-anchor": "middle" }, suit));
  }
  svg.append(middle);
  return svg;
}

// The back of a card (the stock).
export function cardBack() {
  const svg = svgNode("svg", { viewBox: "0 0 50 70", class: "card-svg back", "aria-hidden": "true", focusable: "false" });
  svg.append(svgNode("rect", { x: 0.75, y: 0.75, width: 48.5, height: 68.5, rx: 4.5, class: "back-face" }));
  svg.append(svgNode("rect", { x: 5, y: 5, width: 40, height: 60, rx: 3, class: "back-inner" }));
  svg.append(svgNode("text", { x: 25, y: 41, "font-size": 16, "font-weight": 700, "text-anchor": "middle", class: "back-mark" }, "m"));
  return svg;
}

// Words for screen readers only, inside a control whose drawing (aria-hidden) is all a person sees: its
// accessible name comes from its content, so no aria-label that could differ from the visible text.
export function spoken(text) {
  const node = document.createElement("span");
  node.className = "visually-hidden";
  node.textContent = text;
  return node;
}

// A card to show: its drawing, named for screen readers, its short key in data-card for tests and CSS.
export function cardEl(card, tag = "span") {
  const el = document.createElement(tag);
  const red = card && (card.suit === "SUIT_HEARTS" || card.suit === "SUIT_DIAMONDS");
  el.className = "card" + (red ? " red" : "") + (isJoker(card) ? " joker" : "");
  el.dataset.card = cardKey(card);
  if (tag === "span") {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", cardName(card));
    el.title = cardText(card);
  }
  el.append(cardSvg(card));
  return el;
}

export function cardsEl(cards, cls = "") {
  const el = document.createElement("span");
  el.className = cls;
  for (const card of cards || []) el.append(cardEl(card));
  return el;
}

export function sortCards(cards, byRank) {
  const suitIndex = (c) => SUIT_ORDER.indexOf(c.suit || "SUIT_UNSPECIFIED");
  const rank = (c) => c.rank || 99;
  return [...cards].sort((a, b) =>
    byRank ? rank(a) - rank(b) || suitIndex(a) - suitIndex(b) : suitIndex(a) - suitIndex(b) || rank(a) - rank(b));
}

const cards = (list) => (list || []).map(cardText).join(" ");
const melds = (list) => (list || []).map((m) => cards(m.cards)).join(" | ");
// The action's kind (the Action oneof case) and how it reads: the table every client reads (labels.js).
export function actionKind(action) {
  return Object.keys(action)[0];
}

const voice = { say: t, count: tn, card: cardText };

export function actionLabel(action, view) {
  return label(actionTable(), action, view, voice);
}

// Moves in the order every client lists them (the table's; a kind it does not order after them).
export function byMoveOrder(a, b) {
  return order(actionTable(), actionKind(a)) - order(actionTable(), actionKind(b));
}

// One event of a game (its GameEvent oneof case and body, as the replay export writes them) in a line:
// the nodes to append.
export function eventLine(kind, body, players) {
  const who = body.seat !== undefined && players[body.seat] !== undefined ? [nameEl(players[body.seat]), ": "] : [];
  const seat = (s) => (players[s] !== undefined ? nameEl(players[s]) : t("event.seat", { seat: s }));
  const card = cardText(body.card);
  const meld = (body.meld || 0) + 1;
  const detail = {
    card_drawn: () => [body.from_discard ? t("event.took_pile", { card })
      : t("event.drew_stock", { card: body.card ? card + " " : "" })],
    card_discarded: () => [t("event.discarded", { card })],
    melds_laid: () => [t("event.laid", { melds: melds(body.melds) })],
    cards_laid_off: () => [t("event.laid_off", { cards: cards(body.cards), meld })],
    joker_swapped: () => [t("event.swapped", { cards: cards(body.cards), meld })],
    buy_offered: () => [t("event.offered", { card })],
    buy_requested: () => [t("event.buy_asked", { card })],
    buy_granted: () => [t("event.bought", { card, buys: body.buys_this_round })],
    buy_waived: () => [t("event.buy_waived", { card })],
    buy_passed: () => [body.taken_by_forehand ? t("event.taken_by_forehand", { card }) : t("event.nobody_bought", { card })],
    deal_started: () => tnodes("event.deal_started", { deal: body.deal, who: seat(body.dealer) }),
    deal_ended: () => [...(body.winner !== undefined ? tnodes("event.went_out", { who: seat(body.winner) }) : [t("event.nobody_out")]),
      t("event.penalties", { penalties: (body.penalties || []).join(", ") })],
    game_ended: () => {
      const winners = (body.winners || []).map((s) => players[s] ?? t("event.seat", { seat: s }));
      return [t("event.winner"), ...(winners.length ? nameList(winners) : [t("result.nobody")])];
    },
    turn_timed_out: () => [tn("event.timed_out", body.in_a_row)],
  }[kind];
  const named = t(`event.kind.${kind}`);
  return [...who, named === `event.kind.${kind}` ? kind.replaceAll("_", " ") : named,
    ...(detail ? [" — ", ...detail()] : [])];
}
