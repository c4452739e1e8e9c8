// The app: sign in, lobby, a seat at a table, a spectator's table, and the replay viewer.
// Pages are chosen by the URL's hash (#/lobby, #/play/GAME/SEAT, #/watch/GAME, #/replay/GAME, #/tokens).
import { call, listen, session, whoAmI } from "./api.js";
import { actionKind, actionLabel, cardText, sameCard } from "./cards.js";
import { drawHand, drawTable, names, resultLines, rulesNote, tickTimers } from "./table.js";
import { isolated, nameEl, nameList } from "./names.js";
import { openReplay } from "./replay.js";
import { closeTokens, openTokens } from "./tokens.js";

const $ = (id) => document.getElementById(id);
const PAGES = ["signin-page", "lobby-page", "table-page", "replay-page", "tokens-page"];
let config = { variants: [], short: {}, facts: {} };
let stream = null; // the open EventSource of the page shown
let watchTimer = null;

export function say(text, error = false) {
  $("message").textContent = text;
  $("message").className = error ? "error" : "";
}

function show(page) {
  for (const id of PAGES) $(id).hidden = id !== page;
  const who = session.player ? ["signed in as ", nameEl(session.name), session.kind === "guest" ? " (guest)" : ""] : [];
  $("who").replaceChildren(...who);
  $("signout").hidden = !session.player;
  $("tokens-link").hidden = session.kind !== "human"; // guests and bots hold no personal API tokens
}

function closeStream() {
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
    location.hash = "#/lobby";
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
    $("rating").textContent = `${Number(reply.rating).toFixed(2)} (${reply.games} games)`;
  } catch (err) { $("rating").textContent = `unavailable (${err.message})`; }
}

async function refreshLive() {
  try {
    const reply = await call("GET", "/api/games");
    $("live-games").replaceChildren(...reply.games.map((g) => {
      const li = document.createElement("li");
      const watch = document.createElement("button");
      watch.textContent = "Watch";
      watch.className = "watch";
      watch.addEventListener("click", () => { location.hash = `#/watch/${g.game_id}`; });
      const minutes = Math.max(0, Math.round((Date.now() / 1000 - g.started_at) / 60));
      const scored = g.deals_scored ? ` · ${g.deals_scored} deal${g.deals_scored > 1 ? "s" : ""} scored` : "";
      const players = g.player_names && g.player_names.length ? g.player_names : g.player_ids;
      li.append(`${g.variant} · `, ...nameList(players), ` · started ${minutes} min ago${scored} `, watch);
      return li;
    }));
    if (!reply.games.length) $("live-games").textContent = "No live games right now.";
  } catch (err) { say(err.message, true); }
}

// The match lengths of the variant chosen: its full match, and its short one where it has one.
function showLengths() {
  const short = config.short[$("variant").value];
  $("length").replaceChildren(new Option("full match", "full"), ...(short ? [new Option(`short: ${short}`, "short")] : []));
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

$("quickplay").addEventListener("click", async () => {
  say("Dealing…");
  try {
    const reply = await call("POST", "/api/quickplay",
      { variant: $("variant").value, players: Number($("players").value), length: $("length").value,
        turn_timeout_ms: Number($("turn-time").value) });
    remember(reply.game_id, $("variant").value);
    location.hash = `#/play/${reply.game_id}/${reply.seat}`;
  } catch (err) { say(err.message, true); }
});

async function enqueue(code) {
  try {
    const ticket = await call("POST", "/api/queue", { variant: $("variant").value, players: Number($("players").value), code });
    $("ticket").textContent = code ? `Waiting at private table "${isolated(code)}"…` : "In the queue…";
    closeStream();
    stream = listen(`/api/queue/${ticket.ticket_id}`, {
      ticket: (t) => {
        if (t.state === "TICKET_STATE_SEATED") {
          const seat = t.seats.find((s) => s.player_id === t.you);
          remember(t.game_id, $("variant").value);
          location.hash = `#/play/${t.game_id}/${seat.seat}`;
        } else if (t.state === "TICKET_STATE_QUEUED") {
          $("ticket").textContent = `${code ? "Private table" : "Queue"}: waiting ${Math.round(t.waited_s)} s…`;
        }
      },
      failure: (f) => say(f.message, true),
    });
  } catch (err) { say(err.message, true); }
}
$("queue").addEventListener("click", () => enqueue(""));
$("private").addEventListener("click", () => enqueue($("code").value.trim()));

// --- the table -----------------------------------------------------------------------------------

const tableEls = () => ({ info: $("table-info"), seats: $("seats"), stock: $("stock"), discard: $("discard-pile"),
  offer: $("offer"), melds: $("melds") });
// The order moves are listed in: answering a card on offer first (it waits for you), then the turn's.
const MOVE_ORDER = ["buy_discard", "pass_buy", "go_out", "lay_melds", "lay_off", "swap_joker", "pick_from_pile",
  "draw_from_stock", "take_discard", "discard"];

function logLine(update, view) {
  const li = document.createElement("li");
  if (update.actor !== undefined) li.append(nameEl(names(view)[update.actor]), ": ");
  li.append(update.event_type.replaceAll("_", " "));
  if (update.event_type === "card_discarded" && view.discard_top) li.append(` ${cardText(view.discard_top)}`);
  if (update.by_timer) {
    const tag = document.createElement("span");
    tag.className = "engine";
    tag.textContent = "engine played";
    li.append(" ", tag);
  }
  $("log").prepend(li);
}

async function showResult(view) {
  const box = $("result");
  const over = view.phase === "PHASE_DEAL_OVER" || view.phase === "PHASE_GAME_OVER";
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
  replay.textContent = "Replay this game";
  box.append(replay);
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
      line.append("Scored: winners ", ...(winners.length ? winners : ["-"]), `; totals ${reply.match.totals.join(", ")}`);
      box.append(line);
      return;
    } catch (err) {
      return;
    }
  }
}

function play(gameId, seat) {
  show("table-page");
  $("hand-area").hidden = false;
  $("watch-controls").hidden = true;
  $("log").replaceChildren();
  $("result").hidden = true;
  let view = null;
  let actions = [];
  let byRank = false;
  let sending = false;
  let pileIndex = null; // Rummy 500: the pile card clicked, whose picks alone are listed

  const submit = async (action) => {
    if (sending) return;
    sending = true;
    try {
      await call("POST", `/api/games/${gameId}/actions`, { seat, action });
      say("");
    } catch (err) {
      say(`Refused: ${err.message}`, true);
    } finally { sending = false; }
  };

  const moveButton = (action) => {
    const button = document.createElement("button");
    const kind = actionKind(action);
    button.className = `move ${kind}`;
    button.dataset.kind = kind;
    if (kind === "pick_from_pile") button.dataset.index = `${action.pick_from_pile.index || 0}`;
    button.textContent = actionLabel(action, view);
    button.addEventListener("click", () => submit(action));
    return button;
  };

  const draw = () => {
    drawTable(view, tableEls(), config, seat);
    $("rules-note").textContent = rulesNote(view, config, seat);
    const discards = actions.filter((a) => actionKind(a) === "discard");
    drawHand($("hand"), view.hand, byRank, (card) => {
      const discard = discards.find((a) => sameCard(a.discard.card, card));
      if (discard) submit(discard);
      else say("Only the offered moves below can be played now.", false);
    });
    for (const node of $("hand").children) {
      const text = node.textContent;
      if (discards.some((a) => cardText(a.discard.card) === text)) node.classList.add("playable");
    }
    // The pile's cards that can be picked now (Rummy 500): a click lists that card's uses.
    const picks = actions.filter((a) => actionKind(a) === "pick_from_pile");
    for (const node of $("discard-pile").querySelectorAll(".card[data-index]")) {
      const index = Number(node.dataset.index);
      if (!picks.some((a) => (a.pick_from_pile.index || 0) === index)) continue;
      node.classList.add("pickable");
      node.classList.toggle("chosen", index === pileIndex);
      node.addEventListener("click", () => { pileIndex = index === pileIndex ? null : index; draw(); });
    }
    if (pileIndex !== null && !picks.some((a) => (a.pick_from_pile.index || 0) === pileIndex)) pileIndex = null;
    const shown = pileIndex === null ? actions : picks.filter((a) => (a.pick_from_pile.index || 0) === pileIndex);
    const ordered = [...shown].sort((a, b) => MOVE_ORDER.indexOf(actionKind(a)) - MOVE_ORDER.indexOf(actionKind(b)));
    $("moves").replaceChildren(...ordered.map(moveButton));
    if (pileIndex !== null) {
      const all = document.createElement("button");
      all.className = "small";
      all.id = "all-moves";
      all.textContent = "all moves";
      all.addEventListener("click", () => { pileIndex = null; draw(); });
      $("moves").append(all);
    }
    const offered = actions.some((a) => actionKind(a) === "buy_discard");
    $("moves-title").textContent = offered ? "Your moves — you may buy the card on offer" : "Your moves";
    if (!actions.length) $("moves").textContent = view.phase === "PHASE_GAME_OVER" ? "" : "Waiting for the others…";
    $("return").hidden = !(view.seats[seat] && view.seats[seat].away);
    showResult(view);
  };

  $("sort").onclick = () => { byRank = !byRank; $("sort").textContent = byRank ? "sort by suit" : "sort by rank"; if (view) draw(); };
  $("return").onclick = () => call("POST", `/api/games/${gameId}/return`, { seat }).catch((err) => say(err.message, true));
  $("discard-pile").ondragover = (e) => e.preventDefault();
  $("discard-pile").ondrop = (e) => {
    e.preventDefault();
    const card = JSON.parse(e.dataTransfer.getData("text/plain"));
    const discard = actions.find((a) => actionKind(a) === "discard" && sameCard(a.discard.card, card));
    if (discard) submit(discard);
  };

  closeStream();
  stream = listen(`/api/games/${gameId}/updates?seat=${seat}`, {
    update: (update) => {
      view = update.view;
      actions = update.legal_actions || [];
      if (update.event_type !== "view") logLine(update, view);
      draw();
    },
    failure: (f) => say(f.message, true),
  });
  watchTimer = setInterval(tickTimers, 500);
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
  stream = listen(`/api/games/${gameId}/updates`, {
    update: (update) => queue.push(update),
    failure: (f) => say(f.message, true),
  });
  watchTimer = setInterval(() => {
    tickTimers();
    const pace = Number($("pace").value);
    $("behind").textContent = queue.length > 1 ? `${queue.length} moves to show` : "";
    if (!queue.length || Date.now() - shownAt < pace) return;
    let update = queue.shift();
    while (pace === 0 && queue.length) update = queue.shift();
    shownAt = Date.now();
    if (update.event_type !== "view") logLine(update, update.view);
    drawTable(update.view, tableEls(), config);
    $("rules-note").textContent = rulesNote(update.view, config, null);
    showResult(update.view);
  }, 100);
}

// --- routing -------------------------------------------------------------------------------------

async function route() {
  closeStream();
  closeTokens();
  say("");
  if (!session.player) { show("signin-page"); return; }
  const [page, gameId, seat] = location.hash.replace(/^#\//, "").split("/");
  if (page === "play") play(gameId, Number(seat));
  else if (page === "watch") watch(gameId);
  else if (page === "replay") { show("replay-page"); openReplay(gameId, say); }
  else if (page === "tokens") { show("tokens-page"); openTokens(say); }
  else lobby();
}

config = await call("GET", "/api/variants");
// The operator's OpenID provider, when the gateway has one: its own sign-in page, then back here signed
// in, or at #/signin-failed/CODE (a reason code the gateway chose, never the provider's text).
const provider = await call("GET", "/api/oidc").catch(() => ({ enabled: false, name: "" }));
if (provider.enabled) {
  $("provider-btn").textContent = `Sign in with ${provider.name}`;
  $("provider").hidden = false;
}
$("provider-btn").addEventListener("click", () => { location.href = "/api/oidc/login"; });
const providerFailed = /^#\/signin-failed\/([a-z_]{1,40})$/.exec(location.hash);
await whoAmI();
window.addEventListener("hashchange", route); // only now: the lobby needs the variants' facts
route();
if (providerFailed) {
  say(`Sign-in with ${provider.name || "the provider"} failed (${providerFailed[1]}): try again`, true);
  history.replaceState(null, "", "/");
}
