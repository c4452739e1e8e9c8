// The chat panel of the lobby and of a table (its own module: the page includes it with one line).
// It follows the URL's hash like app.js: #/lobby is the lobby's room, #/play/GAME/SEAT and #/watch/GAME
// the game's. Every line is shown with textContent, never as markup: a line is whatever someone typed.
import { call, listen, whoAmI, session } from "/static/api.js";
import { t } from "/static/i18n.js";

let source = null;
let room = "";
let panel = null;
const muted = new Set();

function roomOf(hash) {
  const parts = hash.replace(/^#\//, "").split("/");
  if (parts[0] === "lobby") return { room: "lobby", base: "/api/chat/lobby", page: "lobby-page" };
  if ((parts[0] === "play" || parts[0] === "watch") && parts[1]) {
    const game = encodeURIComponent(decodeURIComponent(parts[1]));
    return { room: `game:${parts[1]}`, base: `/api/chat/games/${game}`, page: "table-page" };
  }
  return null;
}

function element(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

// An element whose words follow the page's language (translatePage): `keys` its data-i18n* ids.
function words(node, keys) {
  Object.assign(node.dataset, keys);
  if (keys.i18n) node.textContent = t(keys.i18n);
  if (keys.i18nPlaceholder) node.placeholder = t(keys.i18nPlaceholder);
  if (keys.i18nLabel) node.setAttribute("aria-label", t(keys.i18nLabel));
  return node;
}

function build(where) {
  const list = element("ul", { id: "chat-lines", className: "chat-lines", tabIndex: 0 }); // scrollable: keyboard too
  list.setAttribute("aria-live", "polite");
  words(list, { i18nLabel: "chat.title" });
  const input = element("input", { id: "chat-text", maxLength: 300, autocomplete: "off" });
  words(input, { i18nPlaceholder: "chat.placeholder", i18nLabel: "chat.message" });
  const send = words(element("button", { type: "submit" }), { i18n: "chat.send" });
  const form = element("form", { id: "chat-form", className: "buttons" }, [input, send]);
  const status = element("p", { id: "chat-status", className: "note" });
  status.setAttribute("role", "status");
  const unmute = element("button", { type: "button", id: "chat-unmute", hidden: true });
  unmute.addEventListener("click", async () => {
    for (const account of [...muted]) await call("POST", "/api/chat/mutes", { account, muted: false });
    muted.clear();
    unmute.hidden = true;
    status.textContent = t("chat.unmuted");
  });
  const title = words(element("h2"), { i18n: "chat.title" });
  const section = words(element("section", { id: "chat", className: "chat" }, [title, list, form, unmute, status]), { i18nLabel: "chat.title" });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    try {
      await call("POST", where.base, { text });
      input.value = "";
      status.textContent = "";
    } catch (error) {
      status.textContent = error.message; // the gateway's message: set as text
    }
  });
  return section;
}

function hideAuthor(author) {
  for (const item of panel.querySelectorAll("li[data-author]")) {
    if (item.dataset.author === author) item.remove();
  }
}

function showMuted() {
  const unmute = panel && panel.querySelector("#chat-unmute");
  if (!unmute) return;
  unmute.hidden = muted.size === 0;
  unmute.textContent = t("chat.unmute_all", { count: muted.size });
}

function show(line) {
  if (muted.has(line.author) || !panel) return;
  const item = element("li", { className: `chat-line chat-${line.channel}` });
  item.dataset.author = line.author;
  item.dataset.line = line.id;
  const who = element("b", { className: "chat-name", textContent: line.name });
  const text = element("span", { className: "chat-text", textContent: line.text });
  item.append(who, ": ", text);
  if (line.channel === "spectators") item.prepend(element("i", { textContent: t("chat.spectator") }));
  if (line.author !== session.player) {
    const mute = element("button", { type: "button", className: "chat-mute", textContent: t("chat.mute") });
    mute.setAttribute("aria-label", t("chat.mute_label", { who: line.name }));
    mute.addEventListener("click", async () => {
      await call("POST", "/api/chat/mutes", { account: line.author, muted: true });
      muted.add(line.author);
      hideAuthor(line.author);
      showMuted();
    });
    const report = element("button", { type: "button", className: "chat-report", textContent: t("chat.report") });
    report.setAttribute("aria-label", t("chat.report_label", { who: line.name }));
    report.addEventListener("click", async () => {
      await call("POST", "/api/chat/reports", { line: line.id });
      report.disabled = true;
      report.textContent = t("chat.reported");
    });
    item.append(" ", mute, " ", report);
  }
  const list = panel.querySelector("#chat-lines");
  list.append(item);
  while (list.children.length > 200) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

async function follow() {
  const where = roomOf(location.hash);
  if (where && where.room === room) return;
  if (source) source.close();
  if (panel) panel.remove();
  source = null; panel = null; room = "";
  if (!where) return;
  if (!session.player) await whoAmI();
  if (!session.player) return;
  room = where.room;
  muted.clear();
  try {
    for (const account of (await call("GET", "/api/chat/mutes")).muted) muted.add(account);
  } catch { /* no mutes known: the server still leaves muted lines out */ }
  panel = build(where);
  document.getElementById(where.page).append(panel);
  showMuted();
  source = listen(`${where.base}/stream`, { line: show });
}

window.addEventListener("hashchange", follow);
follow();
