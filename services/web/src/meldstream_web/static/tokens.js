// The account page (#/tokens): personal API tokens of the person signed in or of one of their bots, and
// bot accounts. The gateway calls identity for each (services/web/src/meldstream_web/tokens.py); a new
// token's secret is in the one answer that creates it, shown here once and dropped when the person is
// done (no list, no reload shows it again). Labels and names are anyone's text: they enter the page
// through names.js, as text in a <bdi>.
import { call, session } from "./api.js";
import { isolated, nameEl } from "./names.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
let say = () => {};
let holder = ""; // "" = the person signed in, else a bot's account id

// The bots this person created or opened in this browser, so the page lists them again (identity lists
// no one's bots): per account, as ids and names only, nothing secret.
const botsKey = () => `meldstream.bots.${session.player}`;
const myBots = () => JSON.parse(localStorage.getItem(botsKey()) || "[]");

function rememberBot(bot, name) {
  const bots = myBots().filter((b) => b.bot !== bot);
  bots.unshift({ bot, name });
  localStorage.setItem(botsKey(), JSON.stringify(bots.slice(0, 20)));
}

function showHolders() {
  const select = $("token-holder");
  select.replaceChildren(new Option(t("tokens.you"), ""),
    ...myBots().map((b) => new Option(t("tokens.bot_option", { name: isolated(b.name), bot: b.bot }), b.bot)));
  select.value = holder;
}

function hideSecret() {
  $("token-secret-text").value = "";
  $("token-secret").hidden = true;
}

function row(token) {
  const tr = document.createElement("tr");
  tr.dataset.token = token.token_id;
  const cell = (...nodes) => { const td = document.createElement("td"); td.append(...nodes); tr.append(td); return td; };
  cell(token.label ? nameEl(token.label) : t("tokens.no_name")).className = "token-label";
  cell(token.scopes.join(", ")).className = "token-scopes";
  cell(new Date(token.created_at * 1000).toLocaleString());
  const revoke = document.createElement("button");
  revoke.className = "small revoke";
  revoke.textContent = t("tokens.revoke");
  revoke.addEventListener("click", async () => {
    try {
      await call("DELETE", `/api/tokens/${encodeURIComponent(token.token_id)}${query()}`);
      say(t("tokens.revoked"));
      await refresh();
    } catch (err) { say(err.message, true); }
  });
  cell(revoke);
  return tr;
}

const query = () => (holder ? `?bot=${encodeURIComponent(holder)}` : "");

async function refresh() {
  try {
    const reply = await call("GET", `/api/tokens${query()}`);
    const offered = [...document.querySelectorAll("#token-scopes input")].map((box) => box.value);
    if (offered.join(" ") !== reply.scopes.join(" ")) showScopes(reply.scopes); // else: keep the choice
    $("token-list").replaceChildren(...reply.tokens.map(row));
    $("token-none").hidden = reply.tokens.length > 0;
  } catch (err) {
    $("token-list").replaceChildren();
    say(err.message, true);
  }
}

// A box per scope the account's tokens may carry (as identity allows), all chosen to begin with.
function showScopes(scopes) {
  $("token-scopes").replaceChildren(...scopes.map((scope) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.name = "scope";
    box.value = scope;
    box.checked = true;
    label.append(box, scope);
    return label;
  }));
}

function choose(bot) {
  holder = bot;
  hideSecret();
  showHolders();
  refresh();
}

$("token-holder").addEventListener("change", () => choose($("token-holder").value));
$("holder-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const bot = $("holder-id").value.trim();
  rememberBot(bot, bot);
  $("holder-id").value = "";
  choose(bot);
});
$("bot-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    const bot = await call("POST", "/api/bots", { name: $("bot-name").value.trim(), display_name: $("bot-display").value });
    rememberBot(bot.bot, bot.name);
    $("bot-name").value = "";
    $("bot-display").value = "";
    say(t("tokens.bot_created", { name: isolated(bot.name), bot: bot.bot }));
    choose(bot.bot);
  } catch (err) { say(err.message, true); }
});
$("token-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const scopes = [...document.querySelectorAll("#token-scopes input:checked")].map((box) => box.value);
  if (!scopes.length) { say(t("tokens.choose_scope"), true); return; }
  try {
    const created = await call("POST", "/api/tokens", { bot: holder, label: $("token-label").value, scopes });
    $("token-label").value = "";
    $("token-secret-text").value = created.api_token;
    $("token-secret").hidden = false;
    $("token-secret-text").select();
    say("");
    await refresh();
  } catch (err) { say(err.message, true); }
});
$("token-copy").addEventListener("click", async () => {
  const text = $("token-secret-text");
  try {
    await navigator.clipboard.writeText(text.value);
    say(t("tokens.copied"));
  } catch {
    text.select(); // no clipboard for this page (plain http): the person copies the selection
    say(t("tokens.copy_yourself"));
  }
});
$("token-done").addEventListener("click", hideSecret);

// Open the page for the person signed in; `report` shows a message as the app's other pages do.
export function openTokens(report) {
  say = report;
  holder = myBots().some((b) => b.bot === holder) ? holder : "";
  hideSecret();
  showHolders();
  refresh();
}

// Leaving the page: the secret shown goes with it.
export const closeTokens = hideSecret;
