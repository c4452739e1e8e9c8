// How a legal action reads to a person, from the table every client reads (rummy_contracts'
// action_labels.json, served with the catalogue): the page's twin of rummy_contracts.action_labels,
// form for form, so the buttons say what the terminal's menu says. No DOM and no imports: `voice` is
// the page's words (say: a message filled, count: a plural form, card: a card's text), and a test runs
// this module under node beside the Python one.
//
// A kind without a row reads as the catalogue message move.<kind> and sorts after the table's `order`:
// a new action reaches the page with no change here.

// How `kind` reads: its message id and placeholder forms.
export function row(table, kind) {
  const found = (table && table.labels && table.labels[kind]) || {};
  return { id: found.id || `move.${kind}`, args: found.args || {} };
}

// Where `kind` is listed among moves: the table's order, any other kind after them.
export function order(table, kind) {
  const listed = (table && table.order) || [];
  return listed.includes(kind) ? listed.indexOf(kind) : listed.length;
}

// A path's value is set: a message there, a list with items, a scalar other than its zero.
function present(value) {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  return typeof value === "object" ? true : Boolean(value);
}

// How `action` (the API's JSON: {kind: body}) reads to the seat whose `view` offered it.
export function label(table, action, view, voice) {
  const kind = Object.keys(action || {})[0];
  if (kind === undefined) return "";
  const shared = (table && table.shared) || {};

  // The value at `path` of `body` (or of the view, for `view.`); `name[index]` indexes a list by the
  // body's `index`.
  const at = (body, path) => {
    let steps = path.split(".");
    let value = body;
    if (steps[0] === "view") [value, steps] = [view, steps.slice(1)];
    for (const step of steps) {
      const [name, index] = step.split("[");
      if (value === undefined || value === null || typeof value !== "object") return undefined;
      value = value[name];
      if (index !== undefined) {
        const position = at(body, index.replace("]", "")) || 0;
        value = Array.isArray(value) && position >= 0 && position < value.length ? value[position] : undefined;
      }
    }
    return value;
  };
  const cards = (list) => (list || []).map(voice.card).join(" ");

  const message = (form, body) => {
    if (form.at !== undefined) {
      body = at(body, form.at);
      if (body === undefined || body === null || typeof body !== "object") return "";
    }
    if (form.when !== undefined && !present(at(body, form.when))) return "";
    let args = form.args || {};
    if (typeof args.use === "string") args = shared[args.use];
    const params = {};
    for (const [name, value] of Object.entries(args)) params[name] = valueOf(value, body);
    return voice.say(form.id, params);
  };

  const each = (form, body) => (form.each === undefined ? [valueOf(form, body)]
    : (at(body, form.each) || []).map((item) => message(form, item)));

  const valueOf = (form, body) => {
    if (form.use !== undefined) return valueOf(shared[form.use], body);
    if (form.card !== undefined) return voice.card(at(body, form.card));
    if (form.cards !== undefined) return cards(at(body, form.cards));
    if (form.melds !== undefined) return (at(body, form.melds) || []).map((m) => cards(m.cards)).join(" | ");
    if (form.position !== undefined) return `${(at(body, form.position) || 0) + 1}`;
    if (form.choose !== undefined) {
      const chosen = form.ids[at(body, form.choose)];
      return chosen ? voice.say(chosen, {}) : "";
    }
    if (form.plural !== undefined) {
      const after = (at(body, form.in) || []).length - (at(body, form.after) || 0) - 1;
      return after > 0 ? voice.count(form.plural, after, {}) : "";
    }
    if (form.first !== undefined) {
      for (const part of form.first) {
        const text = valueOf(part, body);
        if (text) return text;
      }
      return "";
    }
    if (form.join !== undefined) {
      return form.join.flatMap((part) => each(part, body)).filter((text) => text).join(voice.say("list.separator", {}));
    }
    return message(form, body);
  };

  return message(row(table, kind), action[kind] || {});
}
