// The subscriptions panel: a syntax-checked editor, the list with each subscription's
// matches and last match, watch, explain (against an event), suspend/resume (admin) and delete.

import { call, describeError, json, query } from "./api.js";
import { ago, byId, count, el, empty, fill, flash, timeElement } from "./dom.js";
import { declareMissing } from "./prefixes.js";
import { can } from "./session.js";

/** Subscriptions asked for per page of the list. */
const PAGE = 100;

const state = { listeners: [], timer: null, checks: 0, next: null, shown: [], watch: null };

/** Call `listener(subscriptions)` after every reload of the list (the watch menu uses it). */
export function onSubscriptions(listener) {
  state.listeners.push(listener);
}

/** What the Watch button of a row does (set by the notifications panel). */
export function onWatch(handler) {
  state.watch = handler;
}

/** The Content-Type a subscription text is sent with. */
function mediaType(kind, text) {
  if (kind === "semantic") return "application/sparql-query";
  if (text.trimStart().startsWith("{")) return "application/json";
  return "text/plain";
}

/** "line 2, column 7: message" and the line itself with a caret under the column. */
function describe(text, found) {
  if (!found.line) return found.detail;
  const prefix = found.column ? `${found.line}:${found.column}: ` : `${found.line}: `;
  const detail = found.detail.startsWith(prefix) ? found.detail.slice(prefix.length) : found.detail;
  const where = `line ${found.line}, column ${found.column ?? "?"}: ${detail}`;
  const source = text.split(/\r\n|\r|\n/)[found.line - 1];
  if (source === undefined) return where;
  const caret = found.column ? `${" ".repeat(Math.max(0, found.column - 1))}^` : "";
  return `${where}\n${source}\n${caret}`;
}

function showCheck(message, good) {
  const node = byId("sub-check");
  node.textContent = message;
  node.classList.toggle("good", good);
  node.classList.toggle("bad", !good);
}

/** Run the server's parser over the editor's text; true if it parses. */
async function check() {
  clearTimeout(state.timer);
  const mine = ++state.checks; // only the latest check may write its outcome
  const kind = byId("sub-kind").value;
  const text = byId("sub-text").value;
  const say = (message, good) => mine === state.checks && showCheck(message, good);
  if (text.trim() === "") {
    say("", true);
    return false;
  }
  try {
    const found = await json("POST", `/console/api/check?${query({ kind })}`, { body: text, type: "text/plain" });
    if (found.ok) say(`OK: a valid ${kind} subscription`, true);
    else say(describe(text, found), false);
    return found.ok;
  } catch (error) {
    say(describeError(error), false);
    return false;
  }
}

/** Add PREFIX lines for the known prefixes the text uses but does not declare. */
function declarePrefixes() {
  if (declareMissing(byId("sub-text"), "sparql", "text")) checkSoon();
}

async function register(event) {
  event.preventDefault();
  if (!(await check())) return;
  const kind = byId("sub-kind").value;
  const text = byId("sub-text").value;
  const name = byId("sub-name").value.trim() || null;
  try {
    const answer = await json("POST", `/subscriptions?${query({ kind, name })}`, {
      body: text,
      type: mediaType(kind, text),
    });
    showCheck(`Registered as ${answer.id}`, true);
    await loadSubscriptions();
    flash(`Registered ${answer.id}`);
  } catch (error) {
    showCheck(`Not registered: ${describeError(error)}`, false);
  }
}

function action(label, cls, run) {
  const click = async () => {
    try {
      await run();
      await loadSubscriptions();
    } catch (error) {
      flash(`${label} failed: ${describeError(error)}`, true);
    }
  };
  return el("button", { type: "button", class: cls, onClick: click }, label);
}

function lastMatch(sub) {
  if (sub.last_match === null || sub.last_match === undefined) {
    return sub.matches > 0 ? el("span", { class: "muted" }, "pruned") : el("span", { class: "muted" }, "never");
  }
  return el("span", {}, timeElement(sub.last_match, { withDate: true }), el("span", { class: "muted" }, ` (${ago(sub.last_match)})`));
}

/** A subscription's text: its body in one line (PREFIX lines left out), the whole text
 * below when opened. */
function textCell(text) {
  const body = text.replace(/^\s*PREFIX\s+[^\n]*$/gim, "").replace(/\s+/g, " ").trim();
  const short = body.length > 160 ? `${body.slice(0, 159)}…` : body;
  return el("details", {}, el("summary", {}, short || text.slice(0, 160)), el("pre", {}, text));
}

function row(sub) {
  const id = encodeURIComponent(sub.id);
  const buttons = [];
  if (state.watch) buttons.push(el("button", { type: "button", class: "watch", onClick: () => state.watch(sub.id) }, "Watch"));
  if (sub.kind === "semantic") {
    const explain = () => {
      location.hash = `explain/${id}`;
    };
    buttons.push(el("button", { type: "button", class: "explain", title: "why it matches an event, or not", onClick: explain }, "Explain"));
  }
  if (can("admin") && sub.status === "suspended") {
    buttons.push(action("Resume", "resume", () => call("POST", `/subscriptions/${id}/resume`)));
  } else if (can("admin")) {
    const reason = query({ reason: "suspended from the console" });
    buttons.push(action("Suspend", "suspend", () => call("POST", `/subscriptions/${id}/suspend?${reason}`)));
  }
  buttons.push(
    action("Delete", "delete", async () => {
      await call("DELETE", `/subscriptions/${id}`);
      flash(`Deleted ${sub.id}`);
    }),
  );
  const status = sub.reason ? `${sub.status}: ${sub.reason}` : sub.status;
  return el(
    "tr",
    { "data-id": sub.id },
    el("td", { class: "id nowrap" }, sub.id),
    el("td", { class: "name" }, sub.name ?? ""),
    el("td", { class: "nowrap" }, sub.kind),
    can("admin") ? el("td", { class: "owner" }, sub.owner ?? "") : null,
    el("td", { class: "status" }, status),
    el("td", { class: "matches num nowrap" }, count(sub.matches ?? 0)),
    el("td", { class: "last" }, lastMatch(sub)),
    el("td", { class: "text" }, textCell(sub.text)),
    el("td", { class: "actions" }, buttons),
  );
}

function drawList() {
  byId("sub-owner-col").hidden = !can("admin");
  const rows = state.shown.map(row);
  fill(byId("sub-rows"), rows);
  byId("sub-table").hidden = rows.length === 0;
  fill(
    byId("sub-empty"),
    rows.length === 0 ? empty("No subscriptions yet.", "Write one above, check it, and Register; its matches are counted here.") : null,
  );
  byId("subs-more").hidden = state.next === null;
}

async function fetchPage(cursor) {
  const answer = await json("GET", `/subscriptions?${query({ limit: PAGE, cursor })}`);
  if (Array.isArray(answer)) return { items: answer, next: null }; // an API without pages
  return answer;
}

/** Fetch and draw the first page of the subscriptions the token may see (more on demand). */
export async function loadSubscriptions() {
  if (!can("subscriber")) return;
  await showPage(null, "the subscriptions");
}

async function more() {
  if (state.next === null) return;
  await showPage(state.next, "more subscriptions");
}

/** Fetch the page at `cursor` (null: the first, in place of the list; else added to it),
 * draw the list and tell the listeners; a failure says it could not list `what`. */
async function showPage(cursor, what) {
  try {
    const page = await fetchPage(cursor);
    state.shown = cursor === null ? page.items : [...state.shown, ...page.items];
    state.next = page.next;
    drawList();
    for (const listener of state.listeners) listener(state.shown);
  } catch (error) {
    flash(`Could not list ${what}: ${describeError(error)}`, true);
  }
}

/** Redraw the names (the prefixes changed). */
export function redrawSubscriptions() {
  if (state.shown.length > 0) drawList();
}

function checkSoon() {
  clearTimeout(state.timer);
  state.timer = setTimeout(check, 600);
}

export function setUpSubscriptions() {
  byId("sub-form").addEventListener("submit", register);
  byId("sub-check-button").addEventListener("click", check);
  byId("sub-prefixes").addEventListener("click", declarePrefixes);
  byId("sub-text").addEventListener("input", checkSoon);
  byId("sub-kind").addEventListener("change", checkSoon);
  byId("subs-refresh").addEventListener("click", loadSubscriptions);
  byId("subs-more").addEventListener("click", more);
}
