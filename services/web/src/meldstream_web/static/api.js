// The gateway's JSON API and its event streams. The session lives in cookies this script cannot read:
// the gateway holds the tokens and renews them, so nothing here ever sees one. Calls that change
// something carry the page's CSRF token (the `ms_csrf` cookie, sent back in a header).
export const session = {
  player: null, // the account id: the player id at tables
  name: "",
  kind: "",
  set(account) { this.player = account.player; this.name = account.display_name || account.name || ""; this.kind = account.kind || ""; },
  clear() { this.player = null; this.name = ""; this.kind = ""; },
};

export class ApiError extends Error {
  constructor(body, status) {
    super(body.message || `HTTP ${status}`);
    this.code = body.code || "";
    this.status = status;
  }
}

function csrfToken() {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("ms_csrf="));
  return cookie ? decodeURIComponent(cookie.slice("ms_csrf=".length)) : "";
}

export async function call(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken();
  const response = await fetch(path, {
    method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) session.clear();
  if (!response.ok) throw new ApiError(data, response.status);
  return data;
}

// Who this browser is signed in as, from its session cookies (nobody: `session.player` stays null).
export async function whoAmI() {
  try {
    const me = await call("GET", "/api/me");
    if (me.player) session.set(me); else session.clear();
  } catch { session.clear(); }
}

// An event stream; `handlers` maps event names to functions of the parsed data. The server ends each
// stream with an "end" event, on which it is closed (so the browser does not reconnect to a finished one).
// The session's cookies go with it: no token in the URL.
export function listen(path, handlers) {
  const source = new EventSource(path);
  for (const [name, handler] of Object.entries(handlers)) {
    source.addEventListener(name, (event) => handler(JSON.parse(event.data)));
  }
  source.addEventListener("end", () => source.close());
  return source;
}
