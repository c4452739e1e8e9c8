// The app: sign in, lobby, a seat at a table, a spectator's table, and the replay viewer.
// Pages are chosen by the URL's hash (#/lobby, #/table/TOKEN, #/play/GAME/SEAT, #/watch/GAME,
// #/replay/GAME, #/tokens).
import { call, listen, session, whoAmI } from "./api.js";
import { actionKind, actionLabel, byMoveOrder, cardKey, cardName, sameCard } from "./cards.js";
import { Hand } from "./hand.js";
import { extending, handCards, matching, meldOf, usedKeys } from "./moves.js";
import { drawTable, el, names, resultLines, rulesNote, tickTimers } from "./table.js";
import { nameEl, nameList } from "./names.js";
import { openReplay } from "./replay.js";
import { closeTokens, openTokens } from "./tokens.js";
import { backToTable, closeTable, createTable, joinByCode, openTable } from "./private.js";
import { challenge, closeChallenges, openChallenges } from "./challenges.js";
import { lang, setLanguage, t, tn, tnodes } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const PAGES = ["signin-page", "lobby-page", "private-page", "table-page", "replay-page", "tokens-page"];
let config = { variants: [], short: {}, facts: {}, out_of_turn: [] };
let stream = null; // the open EventSource of the page shown
let watchTimer = null;

export function say(text, error = false) {
  $("message").textContent = text;
  $("message").className = error ? "error" : "";
}

function show(page) {
  for (const id of PAGES) $(id).hidden = id !== page;
  const who = session.player ? tnodes(session.kind === "guest" ? "nav.signed_in_guest" : "nav.signed_in", { who: nameEl(session.name) }) : [];
  $("who").replaceChildren(...who);
  $("signout").hidden = !session.player;
  $("tokens-link").hidden = session.kind !== "human"; // guests and bots hold no personal API tokens
}

function closeStream() {
  turnSignal.set(false);
  if (stream) stream.close();
  stream = null;
  clearInterval(watchTimer);
}

function myGames() {
  return JSON.parse(localStorage.getItem("meldstream.games") || "[]");
}

function remember(gameId, variant) {
  const games = myGames().filter((g) => g.id !== gameId);
  games.unshift({ id: gameId, variant });
  localStorage.setItem("meldstream.games", JSON.stringify(games.slice(0, 20)));
}

// --- sign in and lobby ---------------------------------------------------------------------------

async function signIn(path, body) {
  try {
    session.set(await call("POST", path, body));
    $("signin-password").value = "";
    if (!location.hash.startsWith("#/table/")) location.hash = "#/lobby"; // an invite link waits for this
    route();
  } catch (err) { say(err.message, true); }
}

const credentials = () => ({ name: $("signin-name").value.trim(), password: $("signin-password").value });
$("signin-form").addEventListener("submit", (e) => { e.preventDefault(); signIn("/api/signin", credentials()); });
$("signup-btn").addEventListener("click", () => {
  if ($("signin-form").reportValidity()) signIn("/api/signup", { ...credentials(), display_name: $("signup-display").value });
});
$("guest-btn").addEventListener("click", () => signIn("/api/guest", { display_name: $("signup-display").value }));
$("signout").addEventListener("click", async () => {
  await call("POST", "/api/signout").catch(() => {});
  session.clear();
  route();
});

async function showRating() {
  try {
    const reply = await call("GET", `/api/rating?variant=${$("variant").value}`);
    $("rating").textContent = tn("lobby.rating_value", reply.games, { rating: Number(reply.rating).toFixed(2) });
  } catch (err) { $("rating").textContent = t("lobby.rating_unavailable", { reason: err.message }); }
}

async function refreshLive() {
  try {
    const reply = await call("GET", "/api/games");
    $("live-games").replaceChildren(...reply.games.map((g) => {
      const li = document.createElement("li");
      const watch = document.createElement("button");
      watch.textContent = t("lobby.watch");
      watch.className = "watch";
      watch.addEventListener("click", () => { location.hash = `#/watch/${g.game_id}`; });
      const minutes = Math.max(0, Math.round((Date.now() / 1000 - g.started_at) / 60));
      const scored = g.deals_scored ? tn("lobby.deals_scored", g.deals_scored) : "";
      const players = g.player_names && g.player_names.length ? g.player_names : g.player_ids;
      li.append(`${g.variant} · `, ...nameList(players), tn("lobby.started", minutes), `${scored} `, watch);
      return li;
    }));
    if (!reply.games.length) $("live-games").textContent = t("lobby.no_live");
  } catch (err) { say(err.message, true); }
}

// The match lengths of the variant chosen: its full match, and its short one where it has one.
function showLengths() {
  const short = config.short[$("variant").value];
  $("length").replaceChildren(new Option(t("lobby.full_match"), "full"), ...(short ? [new Option(t("lobby.short_match", { short }), "short")] : []));
}

// The table sizes the variant chosen seats, keeping the size chosen where the variant seats it.
function showPlayers() {
  const [least, most] = config.facts[$("variant").value].players;
  const chosen = Number($("players").value) || least;
  const sizes = Array.from({ length: most - least + 1 }, (_, i) => least + i);
  $("players").replaceChildren(...sizes.map((n) => new Option(`${n}`, `${n}`)));
  $("players").value = `${Math.min(Math.max(chosen, least), most)}`;
}

function lobby() {
  show("lobby-page");
  if (!$("variant").options.length) {
    for (const v of config.variants) $("variant").append(new Option(v, v));
    showPlayers();
    showLengths();
  }
  showRating();
  refreshLive();
  openChallenges(say, (gameId, seat, variant) => { remember(gameId, variant); location.hash = `#/play/${gameId}/${seat}`; });
  $("my-games").replaceChildren(...myGames().map((g) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `#/replay/${g.id}`;
    a.textContent = `${g.variant} ${g.id}`;
    li.append(a);
    return li;
  }));
}

$("variant").addEventListener("change", () => { showRating(); showPlayers(); showLengths(); });
$("refresh-live").addEventListener("click", refreshLive);
$("replay-form").addEventListener("submit", (e) => { e.preventDefault(); location.hash = `#/replay/${$("replay-id").value.trim()}`; });

// The lobby's time bank: null (standard) leaves it to the server's default.
function timeBank() {
  const chosen = $("time-bank").value;
  return chosen === "" ? null : Number(chosen);
}

$("quickplay").addEventListener("click", async () => {
  say(t("lobby.dealing"));
  try {
    const reply = await call("POST", "/api/quickplay",
      { variant: $("variant").value, players: Number($("players").value), length: $("length").value,
        turn_timeout_ms: Number($("turn-time").value), time_bank_ms: timeBank() });
    remember(reply.game_id, $("variant").value);
    location.hash = `#/play/${reply.game_id}/${reply.seat}`;
  } catch (err) { say(err.message, true); }
});

async function enqueue() {
  try {
    const ticket = await call("POST", "/api/queue", { variant: $("variant").value, players: Number($("players").value) });
    $("ticket").textContent = t("lobby.queued");
    closeStream();
    stream = listen(`/api/queue/${ticket.ticket_id}`, {
      ticket: (t) => {
        if (t.state === "TICKET_STATE_SEATED") {
          const seat = t.seats.find((s) => s.player_id === t.you);
          remember(t.game_id, $("variant").value);
          location.hash = `#/play/${t.game_id}/${seat.seat}`;
        } else if (t.state === "TICKET_STATE_QUEUED") {
          $("ticket").textContent = tn("lobby.queue_wait", Math.round(t.waited_s));
        }
      },
      failure: (f) => say(f.message, true),
    });
  } catch (err) { say(err.message, true); }
}
$("queue").addEventListener("click", enqueue);
$("invite").addEventListener("click", () => createTable(
  { variant: $("variant").value, players: Number($("players").value), length: $("length").value,
    turn_timeout_ms: Number($("turn-time").value), time_bank_ms: timeBank(), short_code: $("invite-code").checked }, say));
$("code-form").addEventListener("submit", (e) => { e.preventDefault(); joinByCode($("join-code").value.trim(), say); });
$("challenge-form").addEventListener("submit", (e) => {
  e.preventDefault();
  challenge($("challenge-name").value,
    { variant: $("variant").value, length: $("length").value, turn_timeout_ms: Number($("turn-time").value),
      time_bank_ms: timeBank() });
});

// --- the table -----------------------------------------------------------------------------------

const tableEls = () => ({ info: $("table-info"), seats: $("seats"), stock: $("stock"), discard: $("discard-pile"),
  offer: $("offer"), melds: $("melds") });
async function showResult(view) {
  const box = $("result");
  const seeding = view.phase === "PHASE_DEAL_OVER" && !Number(view.deal || 0); // no deal yet: no result
  const over = (view.phase === "PHASE_DEAL_OVER" && !seeding) || view.phase === "PHASE_GAME_OVER";
  box.hidden = !over;
  if (!over) return;
  box.replaceChildren(...resultLines(view).map((line, i) => {
    const p = document.createElement(i ? "div" : "h3");
    p.append(...line);
    return p;
  }));
  if (view.phase !== "PHASE_GAME_OVER") return;
  const replay = document.createElement("a");
  replay.href = `#/replay/${view.game_id}`;
  replay.id = "open-replay";
  replay.textContent = t("result.replay");
  box.append(replay);
  const back = backToTable(view.game_id);
  if (back) box.append(" · ", back);
  // Scoring follows the game's events: its result comes a moment later. Until it has scored the game's
  // end it answers pending, or (after earlier deals) with those deals and no match yet.
  for (let i = 0; i < 120; i++) {
    try {
      const reply = await call("GET", `/api/games/${view.game_id}/result`);
      if (reply.pending || !reply.match) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      const line = document.createElement("div");
      line.id = "scored";
      const winners = nameList(reply.match.winners);
      line.append(...tnodes("result.scored", { winners: winners.length ? winners : ["-"], totals: reply.match.totals.join(", ") }));
      box.append(line);
      return;
    } catch (err) {
      return;
    }
  }
}

// Answers a seat may give when it is not its turn: the gateway names them (/api/variants).
const outOfTurn = (a) => config.out_of_turn.includes(actionKind(a));

// The "What happened" log: the gateway words each event for this reader (after the first update of a
// stream, the whole history so far), the page only shows the lines, as text, newest first, each seq's
// once (a resumed stream sends the history again).
function logLines(log) {
  for (const line of log.lines) {
    if ($("log").querySelector(`li[data-seq="${Number(line.seq)}"]`)) continue;
    const li = document.createElement("li");
    li.textContent = line.text;
    li.dataset.seq = line.seq;
    $("log").prepend(li);
  }
}

// "Your turn" while the tab is in the background: the title and the icon carry a badge.
const turnSignal = {
  on: false,
  set(on) {
    this.on = on;
    this.show();
  },
  show() {
    const badge = this.on && document.hidden;
    document.title = badge ? t("table.title_turn") : "meldstream";
    const icon = document.querySelector("link[rel=icon]");
    if (!icon) return;
    if (!badge) { icon.href = "data:,"; return; }
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 32;
    const g = canvas.getContext("2d");
    g.fillStyle = "#0b5d3b";
    g.fillRect(0, 0, 32, 32);
    g.fillStyle = "#e6a700";
    g.beginPath();
    g.arc(22, 10, 9, 0, 2 * Math.PI);
    g.fill();
    icon.href = canvas.toDataURL("image/png");
  },
};
document.addEventListener("visibilitychange", () => turnSignal.show());

function fourColour(on) {
  document.body.classList.toggle("four-colour", on);
  $("four-colour").checked = on;
}
fourColour(localStorage.getItem("meldstream.fourColour") === "1");
// The language chosen on the page: the page is drawn again in it (the log worded again by the gateway).
$("language").addEventListener("change", async () => {
  await setLanguage($("language").value);
  if ($("variant").options.length) showLengths();
  route();
});
$("four-colour").addEventListener("change", () => {
  localStorage.setItem("meldstream.fourColour", $("four-colour").checked ? "1" : "0");
  fourColour($("four-colour").checked);
});

function play(gameId, seat) {
  show("table-page");
  $("hand-area").hidden = false;
  $("watch-controls").hidden = true;
  $("log").replaceChildren();
  $("result").hidden = true;
  let view = null;
  let actions = [];
  let sending = false;
  let pileIndex = null; // Rummy 500: the pile card clicked, whose picks alone are listed
  const announce = (text) => { $("announce").textContent = text; };

  const submit = async (action) => {
    if (sending) return;
    sending = true;
    try {
      await call("POST", `/api/games/${gameId}/actions`, { seat, action });
      hand.selected.clear();
      pileIndex = null;
      say("");
    } catch (err) {
      say(t("table.refused", { reason: err.message }), true);
    } finally { sending = false; }
  };
  // One of several moves, or the only one, for a click on a card, a pile or a meld.
  const offer = (found, none) => {
    if (found.length === 1) submit(found[0]);
    else if (found.length) { say(t("table.several")); drawActions(found); }
    else say(none);
  };
  const selectedCards = () => hand.selectedSlots().map((s) => s.card);
  const discardOf = (slot) => actions.find((a) => actionKind(a) === "discard" && sameCard(a.discard.card, slot.card));

  const hand = new Hand($("hand"), `meldstream.hand.${gameId}.${seat}`, {
    changed: () => draw(),
    moved: (slot, to) => announce(t("hand.moved", { card: cardName(slot.card), place: to + 1 })),
    discard: (slot) => {
      const discard = slot && discardOf(slot);
      if (discard) submit(discard);
      else say(t("table.no_discard"));
    },
  }, $("discard-pile"));

  const moveButton = (action, cls = "move") => {
    const button = document.createElement("button");
    const kind = actionKind(action);
    button.type = "button";
    button.className = `${cls} ${kind}`;
    button.dataset.kind = kind;
    if (kind === "pick_from_pile") button.dataset.index = `${action.pick_from_pile.index || 0}`;
    const used = handCards(action, view);
    if (used.length) button.dataset.cards = used.map(cardKey).join(" ");
    if (meldOf(action) !== null) button.dataset.meld = `${meldOf(action)}`;
    button.textContent = actionLabel(action, view);
    button.addEventListener("click", () => submit(action));
    return button;
  };

  // The moves bar: what the cards selected (and a pile card clicked) can do, else the turn's moves
  // that need no card (drawing) and going out; `only` a choice to show instead.
  const drawActions = (only = null) => {
    const chosen = selectedCards();
    const turn = actions.filter((a) => !outOfTurn(a));
    let shown;
    let hint = "";
    if (only) shown = only;
    else if (pileIndex !== null) {
      const picks = turn.filter((a) => actionKind(a) === "pick_from_pile" && (a.pick_from_pile.index || 0) === pileIndex);
      const fit = chosen.length ? matching(picks, chosen, view) : [];
      shown = fit.length ? fit : picks;
    } else if (chosen.length) {
      shown = matching(turn, chosen, view);
      const more = extending(turn, chosen, view);
      if (!shown.length) hint = more ? tn("table.hint_more", more) : t("table.hint_none");
      else if (more) hint = tn("table.hint_or_more", more);
    } else {
      shown = turn.filter((a) => ["draw_from_stock", "take_discard", "go_out"].includes(actionKind(a)));
      if (turn.some((a) => handCards(a, view).length)) hint = t("table.hint_select");
    }
    const buttons = [...shown].sort(byMoveOrder).map((a) => moveButton(a, "act"));
    $("actions").replaceChildren(...buttons, ...(hint ? [el("span", "hint", hint)] : []));
    if (!turn.length) $("actions").replaceChildren(el("span", "hint", view.phase === "PHASE_GAME_OVER" ? "" : t("table.waiting")));
  };

  // The buy window's prompt, for the seat the card is offered to out of turn: buy or pass, with its clock.
  const drawPrompt = () => {
    const answers = actions.filter(outOfTurn).sort(byMoveOrder);
    $("offer").classList.toggle("prompt", answers.length > 0);
    if (!answers.length || $("offer").hidden) return;
    const row = $("offer-row");
    row.append(...answers.map((a) => moveButton(a, "act prompt-answer")));
  };

  const draw = () => {
    drawTable(view, tableEls(), config, seat);
    $("rules-note").textContent = rulesNote(view, config, seat);
    hand.marks.playable = new Set(hand.cards.filter((s) => usedKeys(actions, view).has(cardKey(s.card))).map((s) => s.id));
    hand.draw();
    const chosen = selectedCards();
    const turn = actions.filter((a) => !outOfTurn(a));
    // The stock and the pile: a click draws, takes, or discards the one card selected.
    const stock = $("draw-stock");
    const drawMove = turn.find((a) => actionKind(a) === "draw_from_stock");
    stock.classList.toggle("live", Boolean(drawMove));
    stock.addEventListener("click", () => offer(drawMove ? [drawMove] : [], t("table.no_draw")));
    const pileMoves = () => {
      const take = turn.filter((a) => actionKind(a) === "take_discard");
      const discard = chosen.length === 1 ? matching(turn.filter((a) => actionKind(a) === "discard"), chosen, view) : [];
      return [...take, ...discard];
    };
    const top = $("take-discard");
    if (top) {
      top.classList.toggle("live", pileMoves().length > 0);
      top.addEventListener("click", () => offer(pileMoves(), t("table.pile_nothing")));
    }
    // Rummy 500's spread pile: a click on a card lists that card's uses (or discards the card selected).
    const picks = turn.filter((a) => actionKind(a) === "pick_from_pile");
    for (const node of $("discard-pile").querySelectorAll(".card[data-index]")) {
      const index = Number(node.dataset.index);
      const usable = picks.some((a) => (a.pick_from_pile.index || 0) === index);
      node.classList.toggle("pickable", usable);
      node.classList.toggle("chosen", index === pileIndex);
      node.addEventListener("click", () => {
        if (!usable && pileMoves().length) { offer(pileMoves(), ""); return; }
        if (!usable) { say(t("table.pile_no_use")); return; }
        pileIndex = index; // "all moves" or "clear selection" lists every move again
        draw();
      });
    }
    if (pileIndex !== null && !picks.some((a) => (a.pick_from_pile.index || 0) === pileIndex)) pileIndex = null;
    // The melds: those the cards selected can be laid off on (or swapped for a joker of) are marked;
    // a click makes that move.
    const onMeld = chosen.length ? matching(turn, chosen, view).filter((a) => meldOf(a) !== null) : [];
    for (const node of $("melds").querySelectorAll(".meld[data-meld]")) {
      const index = Number(node.dataset.meld);
      const here = onMeld.filter((a) => meldOf(a) === index);
      node.classList.toggle("target", here.length > 0);
      node.addEventListener("click", () => offer(here, chosen.length ? t("table.meld_no_fit")
        : t("table.meld_select_first")));
    }
    drawActions();
    drawPrompt();
    // Every legal move, listed (for the keyboard and screen readers, and for moves of many cards).
    const all = pileIndex === null ? actions : picks.filter((a) => (a.pick_from_pile.index || 0) === pileIndex);
    $("moves").replaceChildren(...[...all].sort(byMoveOrder).map((a) => moveButton(a)));
    if (pileIndex !== null) {
      const back = document.createElement("button");
      back.className = "small";
      back.id = "all-moves";
      back.textContent = t("table.all_moves");
      back.addEventListener("click", () => { pileIndex = null; draw(); });
      $("moves").append(back);
    }
    $("moves-title").textContent = t("table.all_moves_count", { count: actions.length });
    if (!actions.length) $("moves").textContent = view.phase === "PHASE_GAME_OVER" ? "" : t("table.waiting");
    const mine = turn.length > 0;
    $("turn-badge").hidden = !mine;
    $("my-clock").dataset.deadline = mine || actions.length ? view.turn_deadline || "" : "";
    if (!$("my-clock").dataset.deadline) $("my-clock").textContent = "";
    $("hand-area").classList.toggle("my-turn", mine);
    turnSignal.set(actions.length > 0);
    $("return").hidden = !(view.seats[seat] && view.seats[seat].away);
    showResult(view);
  };

  $("sort").onclick = () => hand.sort(true);
  $("sort-suit").onclick = () => hand.sort(false);
  $("deselect").onclick = () => { pileIndex = null; hand.clear(); };
  $("return").onclick = () => call("POST", `/api/games/${gameId}/return`, { seat }).catch((err) => say(err.message, true));
  window.onresize = () => hand.fit();

  closeStream();
  let seeded = false;
  stream = listen(`/api/games/${gameId}/updates?seat=${seat}&lang=${lang()}`, {
    update: (update) => {
      view = update.view;
      if (!seeded) { seeded = true; sendSeed(gameId, seat, view); }
      actions = update.legal_actions || [];
      hand.update(view.hand);
      draw();
    },
    log: logLines,
    failure: (f) => say(f.message, true),
  });
  watchTimer = setInterval(tickTimers, 250);
}

// Before the first deal (deal 0) the seat sends a random seed of its own, so that no one, the server
// included, can choose the deals (docs/shuffle.md). Too late (the deal is dealt): nothing to say.
function sendSeed(gameId, seat, view) {
  if (Number(view.deal || 0) !== 0 || view.phase !== "PHASE_DEAL_OVER") return;
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const hex = Array.from(seed, (b) => b.toString(16).padStart(2, "0")).join("");
  call("POST", `/api/games/${gameId}/seed`, { seat, seed: hex }).catch(() => {});
}

// A spectator's table: updates are queued and shown one per `pace` ms, so a game played at machine
// speed can still be followed by a person.
function watch(gameId) {
  show("table-page");
  $("hand-area").hidden = true;
  $("watch-controls").hidden = false;
  $("log").replaceChildren();
  $("result").hidden = true;
  const queue = [];
  let shownAt = 0;
  closeStream();
  stream = listen(`/api/games/${gameId}/updates?lang=${lang()}`, {
    update: (update) => queue.push(update),
    log: logLines,
    failure: (f) => say(f.message, true),
  });
  watchTimer = setInterval(() => {
    tickTimers();
    const pace = Number($("pace").value);
    $("behind").textContent = queue.length > 1 ? tn("table.behind", queue.length) : "";
    if (!queue.length || Date.now() - shownAt < pace) return;
    let update = queue.shift();
    while (pace === 0 && queue.length) update = queue.shift();
    shownAt = Date.now();
    drawTable(update.view, tableEls(), config);
    $("rules-note").textContent = rulesNote(update.view, config, null);
    showResult(update.view);
  }, 100);
}

// --- routing -------------------------------------------------------------------------------------

async function route() {
  closeStream();
  closeTokens();
  closeTable();
  closeChallenges();
  say("");
  if (!session.player) { show("signin-page"); return; }
  const [page, gameId, seat] = location.hash.replace(/^#\//, "").split("/");
  if (page === "play") play(gameId, Number(seat));
  else if (page === "watch") watch(gameId);
  else if (page === "table") openTable(gameId, show, say);
  else if (page === "replay") { show("replay-page"); openReplay(gameId, say); }
  else if (page === "tokens") { show("tokens-page"); openTokens(say); }
  else lobby();
}

config = await call("GET", "/api/variants");
// The operator's OpenID provider, when the gateway has one: its own sign-in page, then back here signed
// in, or at #/signin-failed/CODE (a reason code the gateway chose, never the provider's text).
const provider = await call("GET", "/api/oidc").catch(() => ({ enabled: false, name: "" }));
if (provider.enabled) {
  $("provider-btn").textContent = t("signin.provider", { provider: provider.name });
  $("provider").hidden = false;
}
$("provider-btn").addEventListener("click", () => { location.href = "/api/oidc/login"; });
const providerFailed = /^#\/signin-failed\/([a-z_]{1,40})$/.exec(location.hash);
await whoAmI();
window.addEventListener("hashchange", route); // only now: the lobby needs the variants' facts
route();
if (providerFailed) {
  say(t("signin.provider_failed", { provider: provider.name || t("signin.the_provider"), code: providerFailed[1] }), true);
  history.replaceState(null, "", "/");
}
