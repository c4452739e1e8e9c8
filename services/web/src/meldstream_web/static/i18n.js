// The page's words: the message catalogue the gateway serves at /i18n/<lang>.json, the same file its
// log in words and the terminal read (rummy_contracts/messages). A message has {name} placeholders, or
// plural forms keyed by CLDR category, chosen by the browser's Intl.PluralRules. The language is the one
// chosen on the page (remembered), else the first of the browser's languages the catalogue has.
const KEY = "meldstream.lang";
let catalogue = { lang: "en", messages: {} };
// The languages offered: the options of the page's language select (a test keeps them the catalogue's).
const OFFERED = [...document.querySelectorAll("#language option")].map((o) => o.value);
let rules = new Intl.PluralRules("en");

function fill(template, params) {
  return template.replace(/\{([a-z_]+)\}/g, (_, name) => `${params[name]}`);
}

// The message `id` with its placeholders filled (the id itself if the catalogue lacks it).
export function t(id, params = {}) {
  const message = catalogue.messages[id];
  return typeof message === "string" ? fill(message, params) : id;
}

// The plural form of `id` for `count` (its {count} placeholder), other placeholders from `params`.
export function tn(id, count, params = {}) {
  const forms = catalogue.messages[id];
  if (!forms || typeof forms !== "object") return id;
  return fill(forms[rules.select(count)] || forms.other, { ...params, count });
}

function pieces(template, params) {
  return template.split(/(\{[a-z_]+\})/).map((part) => {
    const name = /^\{([a-z_]+)\}$/.exec(part);
    return name ? params[name[1]] : part;
  }).flat().filter((part) => part !== "");
}

// The message `id` as nodes to append: a placeholder's value may be a node (a name drawn by nameEl) or
// a list of them, never put into a string with the text around it.
export function tnodes(id, params = {}) {
  const message = catalogue.messages[id];
  return typeof message === "string" ? pieces(message, params) : [id];
}

// "a, b and c" in the language's words, as nodes or strings.
export function joined(items) {
  if (items.length <= 1) return [...items];
  const [before, after] = t("list.and", { rest: "\u0000", last: "\u0001" }).split("\u0000");
  const [between, end] = after.split("\u0001");
  const out = [before];
  items.slice(0, -1).forEach((item, i) => out.push(...(i ? [t("list.separator")] : []), item));
  return [...out, between, items[items.length - 1], end].filter((part) => part !== "");
}

export const lang = () => catalogue.lang;
// How each action reads (rummy_contracts' action_labels.json), served with the catalogue: labels.js.
export const actionTable = () => catalogue.actions;

// The elements of the page's markup that carry words: data-i18n (their text), data-i18n-placeholder,
// data-i18n-label (aria-label) and data-i18n-title.
export function translatePage(root = document) {
  document.documentElement.lang = catalogue.lang;
  const select = document.getElementById("language");
  if (select) select.value = catalogue.lang;
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const node of root.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
  for (const node of root.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
}

async function load(code) {
  const response = await fetch(`/i18n/${code}.json`, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`no catalogue for ${code}`);
  catalogue = await response.json();
  rules = new Intl.PluralRules(catalogue.lang);
}

function chosen() {
  const stored = localStorage.getItem(KEY);
  return [...(stored ? [stored] : []), ...(navigator.languages || [navigator.language || "en"])];
}

// Switch to `code` (remembered for the next visit) and translate the markup.
export async function setLanguage(code) {
  await load(code);
  localStorage.setItem(KEY, catalogue.lang);
  translatePage();
}

// The first chosen language offered (by its primary subtag: "ru-RU" is "ru"), else English.
const first = chosen().map((tag) => `${tag}`.toLowerCase().split(/[-_]/)[0]).find((code) => OFFERED.includes(code));
await load(first || "en");
translatePage();
