// Building DOM nodes safely: text only ever becomes a Text node (never HTML), and
// attributes are set one by one, so hostile IRIs, literals and names render as text.

const SVG = "http://www.w3.org/2000/svg";

/**
 * A new element. `props` holds attributes ("class", "title", "data-x"...) and event
 * handlers ("onClick": a function, added with addEventListener); children are strings
 * (inserted as text), nodes, or null (skipped).
 */
export function el(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

/** An SVG element (attributes only: the policy forbids inline styles). */
export function svg(tag, props = {}, ...children) {
  return build(document.createElementNS(SVG, tag), props, children);
}

function build(node, props, children) {
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (!key.startsWith("on") && key !== "style") {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** The element with this id (throws if the page lacks it: a bug, not user input). */
export function byId(id) {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`no element #${id}`);
  return node;
}

/** Show a message in the status line of the panel on show (bad = an error). It stays on
 * that panel only: switching tabs clears it (clearFlashes). */
export function flash(message, bad = false) {
  const panel = document.querySelector("[data-panel]:not([hidden])");
  const node = panel ? panel.querySelector(".flash") : null;
  if (node === null) return;
  node.textContent = message;
  node.classList.toggle("bad", bad);
}

export function clearFlashes() {
  for (const node of document.querySelectorAll(".flash")) {
    node.textContent = "";
    node.classList.remove("bad");
  }
}

const NUMBER = new Intl.NumberFormat("en-US");

/** 4781 -> "4,781". */
export function count(n) {
  return NUMBER.format(n);
}

function pad(n, width = 2) {
  return String(n).padStart(width, "0");
}

/** A Unix time (seconds) as a <time> element: local date and time to the millisecond,
 * the date left out when it is today; `datetime` holds the UTC ISO form. */
export function timeElement(seconds, { withDate = false } = {}) {
  const when = new Date(Math.round(seconds * 1000));
  const today = new Date().toDateString() === when.toDateString();
  const clock = `${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())}.${pad(when.getMilliseconds(), 3)}`;
  const day = `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}`;
  const text = withDate || !today ? `${day} ${clock}` : clock;
  return el("time", { datetime: when.toISOString(), title: when.toString() }, text);
}

/** "12 s ago", "3 min ago", "2 h ago", "4 d ago" for a Unix time (seconds). */
export function ago(seconds) {
  const past = Math.max(0, Date.now() / 1000 - seconds);
  if (past < 60) return `${Math.floor(past)} s ago`;
  if (past < 3600) return `${Math.floor(past / 60)} min ago`;
  if (past < 86400) return `${Math.floor(past / 3600)} h ago`;
  return `${Math.floor(past / 86400)} d ago`;
}

/** An empty state: a short sentence (and an optional second line) in a muted box. */
export function empty(text, hint = null) {
  return el("div", { class: "empty" }, el("p", {}, text), hint ? el("p", { class: "muted" }, hint) : null);
}

/** A grid table: its columns named by `heads`, its rows (<tr> elements) `rows`; `props` and
 * `body`: the attributes of the table and of its <tbody>, as el's. */
export function grid(props, heads, rows, body = {}) {
  const head = el("thead", {}, el("tr", {}, heads.map((h) => el("th", {}, h))));
  return el("table", props, head, el("tbody", body, rows));
}
