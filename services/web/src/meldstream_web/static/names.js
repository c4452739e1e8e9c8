// Player ids and names are text from anyone: they enter a page only through these, as text nodes
// (never markup), each isolated in a <bdi> so a right-to-left name cannot reorder the text around it.
// The same rules as rummy_service.text and rummy_service.limits, in the browser.
import { tn } from "./i18n.js";

export const DISPLAY_NAME = 64; // rummy_service.limits.DISPLAY_NAME
// Bidi embeddings, overrides and isolates: an unpaired PDI or PDF ends the <bdi>'s isolation early in
// chromium, and an override after it reverses the rest of the line. Invisible, so dropping them
// changes nothing a person sees in the name itself.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

// A name as a page shows it: without bidi controls, cut at DISPLAY_NAME characters saying how many more.
export function nameText(name) {
  const chars = [...String(name ?? "?").replace(BIDI_CONTROLS, "")];
  const more = chars.length - DISPLAY_NAME;
  return more > 0 ? chars.slice(0, DISPLAY_NAME).join("") + tn("names.more", more) : chars.join("");
}

// A name as an element to append.
export function nameEl(name) {
  const node = document.createElement("bdi");
  node.className = "name";
  node.textContent = nameText(name);
  return node;
}

// A name in a place that holds only text (an <option>): isolated by FSI … PDI.
export function isolated(name) {
  return `\u2068${nameText(name)}\u2069`;
}

// Names separated by `separator`, as nodes to append.
export function nameList(names, separator = ", ") {
  return names.flatMap((name, i) => (i ? [separator, nameEl(name)] : [nameEl(name)]));
}
