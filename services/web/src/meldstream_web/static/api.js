// The gateway's JSON API and its event streams, with the signed-in player's token.
export const session = {
  get player() { return localStorage.getItem("meldstream.player"); },
  get token() { return localStorage.getItem("meldstream.token"); },
  save(player, token) { localStorage.setItem("meldstream.player", player); localStorage.setItem("meldstream.token", token); },
  clear() { localStorage.removeItem("meldstream.player"); localStorage.removeItem("meldstream.token"); },
};

export class ApiError extends Error {
  constructor(body, status) {
    super(body.message || `HTTP ${status}`);
    this.code = body.code || "";
    this.status = status;
  }
}

// Tokens expire (an hour, by default). Signing in is giving a name, so the app signs in again with the
// same name before the token runs out: each minute and before each call it checks the token's `exp`
// claim, and a call refused as expired anyway (a laptop that slept) is sent once more with a new token.
const RENEW_BEFORE_S = 600;

function expiresAt(token) {
  try {
    return JSON.parse(atob(token.split(".")[0].replace(/-/g, "+").replace(/_/g, "/"))).exp || 0;
  } catch {
    return 0;
  }
}

async function renew() {
  const response = await fetch("/api/signin", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: session.player }),
  });
  if (!response.ok) return false;
  const data = await response.json();
  session.save(data.player, data.token);
  return true;
}

async function fresh() {
  const token = session.token;
  if (token && session.player && expiresAt(token) - Date.now() / 1000 < RENEW_BEFORE_S) await renew();
}

setInterval(() => { fresh().catch(() => {}); }, 60_000);

export async function call(method, path, body, token) {
  const own = token === undefined;  // the session's token (null: none, e.g. signing in)
  if (own) await fresh().catch(() => {});
  const send = own ? session.token : token;
  const headers = { "Content-Type": "application/json" };
  if (send) headers.Authorization = `Bearer ${send}`;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401 && data.code === "token_expired" && own && session.player && await renew()) {
    return call(method, path, body, session.token);
  }
  if (!response.ok) throw new ApiError(data, response.status);
  return data;
}

// An event stream; `handlers` maps event names to functions of the parsed data. The server ends each
// stream with an "end" event, on which it is closed (so the browser does not reconnect to a finished one).
export function listen(path, handlers, token = session.token) {
  const url = `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`;
  const source = new EventSource(url);
  for (const [name, handler] of Object.entries(handlers)) {
    source.addEventListener(name, (event) => handler(JSON.parse(event.data)));
  }
  source.addEventListener("end", () => source.close());
  return source;
}
