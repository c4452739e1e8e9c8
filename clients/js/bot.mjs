// A meldstream bot over the HTTP bot API (docs/clients/http-api.md), on Node's own fetch (Node 20+),
// no dependency: it signs in with a bot's API token, accepts the challenges made to it (declining a
// clock under 10 s a turn), and plays every game that starts to the end from the legal actions listed.
// Usage: node bot.mjs https://play.example.org <bot API token> [games to play, then stop; default: all]
const [base, apiToken = process.env.MELDSTREAM_BOT_TOKEN, games = "Infinity"] = process.argv.slice(2);
if (!base || !apiToken) throw new Error("usage: node bot.mjs GATEWAY_URL API_TOKEN [GAMES]");
let access = "", renewAt = 0;

// The API token is exchanged for a short-lived access token, exchanged again at half its life.
async function token() {
  if (Date.now() / 1000 < renewAt) return access;
  const grant = await expect(await send("POST", "/api/v1/token", { api_token: apiToken }, false), "token");
  access = grant.access_token;
  renewAt = (Date.now() / 1000 + grant.expires_at) / 2;
  return access;
}

// One call; over the gateway's limit (429) it waits as long as Retry-After says and calls again.
async function send(method, path, body, signedIn = true) {
  for (;;) {
    const headers = { "Content-Type": "application/json" };
    if (signedIn) headers.Authorization = `Bearer ${await token()}`;
    const res = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
    if (res.status !== 429) return res;
    await new Promise((done) => setTimeout(done, 1000 * Number(res.headers.get("retry-after") || 1)));
  }
}

async function expect(res, what) {
  const answer = await res.json();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${answer.code}: ${answer.message}`);
  return answer;
}

// An NDJSON stream's objects, one a line (empty lines only keep the connection alive).
async function* lines(res) {
  if (!res.ok) await expect(res, "stream");
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line) yield JSON.parse(line);
    }
  }
}

// Lay down what it can, go out when it can, never buy; otherwise draw and discard any card.
const PREFERRED = ["go_out", "lay_melds", "lay_off", "pass_buy", "draw_from_stock", "discard"];
function choose(actions) {
  for (const wanted of PREFERRED) {
    const found = actions.filter((action) => Object.keys(action)[0] === wanted);
    if (found.length) return found[Math.floor(Math.random() * found.length)];
  }
  return actions[Math.floor(Math.random() * actions.length)];
}

// One game: a random seed of its own (no one then chooses the deals), then a move whenever it may act.
async function play(game) {
  const bytes = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0"));
  const sent = await send("POST", `/api/v1/games/${game.game_id}/seed`, { seed: bytes.join(""), seat: game.seat });
  if (sent.status !== 409) await expect(sent, "seed"); // 409: dealt already (the seed window closed)
  let moves = 0;
  for await (const update of lines(await send("GET", `/api/v1/games/${game.game_id}/stream`))) {
    if (update.type === "error") throw new Error(`game ${game.game_id}: ${update.code}: ${update.message}`);
    if (update.view.phase === "PHASE_GAME_OVER") return { view: update.view, moves };
    if (!update.legal_actions.length) continue;
    const move = { action: choose(update.legal_actions), seat: update.seat };
    const res = await send("POST", `/api/v1/games/${game.game_id}/move`, move);
    if (res.ok) moves++;
    else if (res.status !== 409) await expect(res, "move"); // 409: an older update's move, now stale
  }
  throw new Error(`game ${game.game_id}: the stream ended before the game`);
}

const me = await expect(await send("GET", "/api/v1/account"), "account");
const { variants } = await expect(await send("GET", "/api/v1/variants"), "variants");
console.log(`signed in as ${me.player} (${me.kind}); variants ${variants.join(" ")}`);
let left = Number(games);
const playing = [];
for await (const event of lines(await send("GET", "/api/v1/stream/event"))) {
  if (event.type === "challenge" && event.challenge.challenged === me.player) {
    const { id, variant, challenger, turn_timeout_ms: clock } = event.challenge;
    const answer = clock && clock < 10000 ? "decline" : "accept"; // under 10 s a turn: too fast for it
    const res = await send("POST", `/api/v1/challenge/${id}/${answer}`, { reason: "tooFast" });
    if (res.status !== 409) await expect(res, answer); // 409: canceled (or answered) meanwhile
    console.log(`challenge ${id} from ${challenger} to ${variant}: ${answer === "accept" ? "accepted" : "declined"}`);
  } else if (event.type === "gameStart") {
    const over = ({ view, moves }) => `${view.variant} ${event.game.game_id} over after ${moves} moves of mine: winners ${view.winners}`;
    playing.push(play(event.game).then((ended) => console.log(over(ended))));
  } else if (event.type === "gameFinish") {
    console.log(`${event.game.game_id} finished: scoring's winners ${event.result.match.winners}`);
    if (--left <= 0) break;
  }
}
await Promise.all(playing);
process.exit(0); // the event stream stays open otherwise
