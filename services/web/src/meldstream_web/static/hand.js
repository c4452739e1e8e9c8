// Your hand as a fan of cards in the order you put them (drag with SortableJS, or Shift+arrow keys),
// kept in this browser per game and seat (localStorage holds card order only, never a token). Cards are
// selected by click, Space or Enter; what the selection can do is the server's legal actions (moves.js).
import { cardKey, cardName, cardSvg, sortCards, spoken } from "./cards.js";

const reduced = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// Each card of a hand under a slot id: its key and which copy it is ("7H#0", "7H#1" in two decks).
export function slots(hand) {
  const seen = {};
  return (hand || []).map((card) => {
    const key = cardKey(card);
    seen[key] = (seen[key] || 0) + 1;
    return { id: `${key}#${seen[key] - 1}`, card };
  });
}

export class Hand {
  // `target` the element holding the cards; `storeKey` where the order is kept; `on` the callbacks:
  // changed() after a selection or order change, discard(slot) for a double-click, a drop on the pile
  // or the D key; `dropTarget` the element a card dragged onto is discarded.
  constructor(target, storeKey, on, dropTarget) {
    this.target = target;
    this.storeKey = storeKey;
    this.on = on;
    this.dropTarget = dropTarget;
    this.cards = []; // slots, in the order shown
    this.selected = new Set();
    this.focus = null; // the slot id holding the roving tab stop
    this.dragging = false;
    this.pending = null; // a hand that arrived during a drag, drawn at its end
    this.marks = { playable: new Set(), fresh: new Set() };
    this.sortable = window.Sortable ? window.Sortable.create(target, {
      forceFallback: true, // one drag model for mouse, touch and WebDriver
      fallbackTolerance: 5, // a click stays a click
      animation: reduced() ? 0 : 120,
      draggable: ".card",
      onStart: () => { this.dragging = true; },
      onEnd: (event) => this.dropped(event),
    }) : null;
    target.addEventListener("keydown", (event) => this.key(event));
  }

  stored() {
    try { return JSON.parse(localStorage.getItem(this.storeKey) || "[]"); } catch { return []; }
  }

  save() {
    localStorage.setItem(this.storeKey, JSON.stringify(this.cards.map((s) => s.id)));
  }

  // A new hand from the server: the order kept for the cards still held, new cards at the right end.
  update(hand) {
    if (this.dragging) { this.pending = hand; return; }
    const now = slots(hand);
    const byId = new Map(now.map((s) => [s.id, s]));
    const known = new Set(this.cards.map((s) => s.id));
    const order = this.cards.length ? this.cards.map((s) => s.id) : this.stored();
    const kept = order.filter((id) => byId.has(id)).map((id) => byId.get(id));
    const keptIds = new Set(kept.map((s) => s.id));
    let added = now.filter((s) => !keptIds.has(s.id));
    if (added.length > 3) { // a new deal (or a pile picked up): dealt in suit order, then yours to arrange
      const sorted = sortCards(added.map((s) => s.card), false);
      const left = [...added];
      added = sorted.map((card) => left.splice(left.findIndex((s) => s.card === card), 1)[0]);
    }
    this.marks.fresh = this.cards.length ? new Set(added.filter((s) => !known.has(s.id)).map((s) => s.id)) : new Set();
    this.cards = [...kept, ...added];
    for (const id of [...this.selected]) if (!byId.has(id)) this.selected.delete(id);
    this.save();
  }

  sort(byRank) {
    const sorted = sortCards(this.cards.map((s) => s.card), byRank);
    const left = [...this.cards];
    this.cards = sorted.map((card) => left.splice(left.findIndex((s) => s.card === card), 1)[0]);
    this.save();
    this.draw();
  }

  selectedSlots() {
    return this.cards.filter((s) => this.selected.has(s.id));
  }

  clear() {
    this.selected.clear();
    this.on.changed();
  }

  toggle(id) {
    if (this.selected.has(id)) this.selected.delete(id); else this.selected.add(id);
    this.focus = id;
    this.on.changed();
  }

  draw() {
    if (this.dragging) return;
    const n = this.cards.length;
    if (this.focus === null || !this.cards.some((s) => s.id === this.focus)) this.focus = n ? this.cards[0].id : null;
    const hadFocus = this.target.contains(document.activeElement);
    this.target.style.setProperty("--n", `${n}`);
    this.target.replaceChildren(...this.cards.map((s, i) => {
      const button = document.createElement("button");
      button.type = "button";
      const chosen = this.selected.has(s.id);
      button.className = "card" + (chosen ? " selected" : "") + (this.marks.playable.has(s.id) ? " playable" : "") +
        (this.marks.fresh.has(s.id) ? " fresh" : "");
      button.dataset.card = cardKey(s.card);
      button.dataset.slot = s.id;
      button.setAttribute("aria-pressed", chosen ? "true" : "false");

      button.tabIndex = s.id === this.focus ? 0 : -1;
      // The fan: each card turned a little about the hand's middle (a custom property, not inline CSS).
      button.style.setProperty("--fan", `${n > 1 ? (i - (n - 1) / 2) / ((n - 1) / 2) : 0}`);
      button.append(cardSvg(s.card), spoken(`${cardName(s.card)}, ${i + 1} of ${n}`));
      button.addEventListener("click", () => this.toggle(s.id));
      button.addEventListener("dblclick", () => this.on.discard(s));
      return button;
    }));
    this.fit();
    if (hadFocus) this.focusCard(this.focus);
  }

  // How much each card overlaps the next so that the whole fan fits the hand's width.
  fit() {
    const n = this.cards.length;
    const width = this.target.clientWidth;
    const first = this.target.firstElementChild;
    if (!n || !first || !width) return;
    const card = first.offsetWidth;
    const step = n > 1 ? Math.min(card * 0.72, (width - card - 16) / (n - 1)) : card;
    this.target.style.setProperty("--overlap", `${Math.min(0, step - card)}px`);
  }

  focusCard(id) {
    const node = [...this.target.children].find((c) => c.dataset.slot === id);
    if (node) node.focus();
  }

  move(id, by) {
    const at = this.cards.findIndex((s) => s.id === id);
    const to = at + by;
    if (at < 0 || to < 0 || to >= this.cards.length) return;
    const [slot] = this.cards.splice(at, 1);
    this.cards.splice(to, 0, slot);
    this.save();
    this.draw();
    this.focusCard(id);
    this.on.moved(slot, to);
  }

  key(event) {
    const id = event.target.dataset && event.target.dataset.slot;
    if (!id) return;
    const at = this.cards.findIndex((s) => s.id === id);
    const go = (to) => {
      const slot = this.cards[Math.max(0, Math.min(this.cards.length - 1, to))];
      this.focus = slot.id;
      for (const c of this.target.children) c.tabIndex = c.dataset.slot === slot.id ? 0 : -1;
      this.focusCard(slot.id);
    };
    const handled = {
      ArrowLeft: () => (event.shiftKey || event.altKey ? this.move(id, -1) : go(at - 1)),
      ArrowRight: () => (event.shiftKey || event.altKey ? this.move(id, 1) : go(at + 1)),
      Home: () => go(0),
      End: () => go(this.cards.length - 1),
      Escape: () => { this.selected.clear(); this.on.changed(); },
      d: () => this.on.discard(this.cards[at]),
      Delete: () => this.on.discard(this.cards[at]),
    }[event.key];
    if (!handled) return;
    event.preventDefault();
    handled();
  }

  dropped(event) {
    this.dragging = false;
    const e = event.originalEvent;
    const point = e && e.changedTouches && e.changedTouches.length ? e.changedTouches[0] : e;
    const under = point && typeof point.clientX === "number" ? document.elementFromPoint(point.clientX, point.clientY) : null;
    const id = event.item && event.item.dataset.slot;
    if (under && this.dropTarget.contains(under) && id) {
      this.draw(); // back in its place until the server takes the discard
      this.on.discard(this.cards.find((s) => s.id === id));
    } else {
      const order = [...this.target.children].map((c) => c.dataset.slot);
      const byId = new Map(this.cards.map((s) => [s.id, s]));
      this.cards = order.filter((o) => byId.has(o)).map((o) => byId.get(o));
      this.save();
    }
    if (this.pending) { const hand = this.pending; this.pending = null; this.update(hand); }
    this.on.changed();
    // SortableJS's fallback mode swallows the click that follows a drag (the mouseup's). When the
    // card pressed was redrawn (dropped on the pile, or a hand arrived meanwhile) no click follows, and
    // it swallowed the player's next one instead, a draw from the stock say: spend it here. A click
    // on the document itself reaches no handler of the page.
    setTimeout(() => document.dispatchEvent(new MouseEvent("click")));
  }
}
