// Which of the server's legal actions a selection of your cards can make. Nothing here decides what is
// legal: the page reads each listed action for the hand cards it uses and where it goes (the stock, the
// pile, a table meld), and offers the ones whose cards are exactly the cards selected.
import { actionKind, cardKey } from "./cards.js";

const meldCards = (melds) => (melds || []).flatMap((m) => m.cards || []);

function minus(cards, taken) {
  const left = [...cards];
  for (const card of taken) {
    const at = left.findIndex((c) => cardKey(c) === cardKey(card));
    if (at >= 0) left.splice(at, 1);
  }
  return left;
}

function thenCards(body) {
  if (body.lay_melds) return meldCards(body.lay_melds.melds);
  if (body.lay_off) return body.lay_off.cards || [];
  return [];
}

// The cards of your hand an action uses (a pick's cards from the pile and a swap's freed joker are
// not in your hand, so they are left out).
export function handCards(action, view) {
  const kind = actionKind(action);
  const body = action[kind] || {};
  switch (kind) {
    case "lay_melds": return meldCards(body.melds);
    case "lay_off": return body.cards || [];
    case "discard": return body.card ? [body.card] : [];
    case "go_out": return [...meldCards(body.melds), ...(body.layoffs || []).flatMap((l) => l.cards || []),
      ...(body.discard ? [body.discard] : [])];
    case "swap_joker": return [...(body.cards || []), ...minus(thenCards(body), [{ rank: 0 }])];
    case "pick_from_pile": return minus(thenCards(body), ((view && view.discard_pile) || []).slice(body.index || 0));
    default: return [];
  }
}

const signature = (cards) => cards.map(cardKey).sort().join(" ");

// The table meld an action goes to, if any.
export function meldOf(action) {
  const kind = actionKind(action);
  const body = action[kind] || {};
  if (kind === "lay_off" || kind === "swap_joker") return body.meld || 0;
  return null;
}

// The actions whose hand cards are exactly `cards`.
export function matching(actions, cards, view) {
  const wanted = signature(cards);
  return actions.filter((a) => handCards(a, view).length && signature(handCards(a, view)) === wanted);
}

// How many actions use every card of `cards` and more besides (a selection on its way to a move).
export function extending(actions, cards, view) {
  return actions.filter((a) => {
    const used = handCards(a, view);
    return used.length > cards.length && minus(used, cards).length === used.length - cards.length;
  }).length;
}

// The card keys that some action uses: the cards worth a look.
export function usedKeys(actions, view) {
  return new Set(actions.filter((a) => actionKind(a) !== "discard").flatMap((a) => handCards(a, view).map(cardKey)));
}
