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

export async function call(method, path, body, token = session.token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
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
