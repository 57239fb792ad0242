// The subscriptions panel: a syntax-checked editor, the list, suspend/resume/delete.

import { call, json } from "./api.js";
import { byId, el, fill, flash } from "./dom.js";

/** Subscriptions asked for per page, and the most the list shows. */
const PAGE = 500;
const MAX_LISTED = 5000;

const state = { role: null, listeners: [], timer: null, checks: 0 };

/** Call `listener(subscriptions)` after every reload of the list (the watch menu uses it). */
export function onSubscriptions(listener) {
  state.listeners.push(listener);
}

export function setRole(role) {
  state.role = role;
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
  const detail = found.detail.replace(/^\d+:\d+:\s*/, ""); // the position, said below
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
    const path = `/console/api/check?kind=${encodeURIComponent(kind)}`;
    const found = await json("POST", path, { body: text, type: "text/plain" });
    if (found.ok) say(`OK: a valid ${kind} subscription`, true);
    else say(describe(text, found), false);
    return found.ok;
  } catch (error) {
    say(error.message, false);
    return false;
  }
}

async function register(event) {
  event.preventDefault();
  if (!(await check())) return;
  const kind = byId("sub-kind").value;
  const text = byId("sub-text").value;
  const name = byId("sub-name").value.trim();
  const query = new URLSearchParams({ kind });
  if (name) query.set("name", name);
  try {
    const answer = await json("POST", `/subscriptions?${query}`, {
      body: text,
      type: mediaType(kind, text),
    });
    flash(`Registered ${answer.id}`);
    showCheck(`Registered as ${answer.id}`, true);
    await loadSubscriptions();
  } catch (error) {
    const where = error.line ? ` (line ${error.line}, column ${error.column})` : "";
    showCheck(`Not registered: ${error.message}${where}`, false);
  }
}

function action(label, cls, run) {
  const click = async () => {
    try {
      await run();
      await loadSubscriptions();
    } catch (error) {
      flash(`${label} failed: ${error.message}`, true);
    }
  };
  return el("button", { type: "button", class: cls, onClick: click }, label);
}

function row(sub) {
  const id = encodeURIComponent(sub.id);
  const buttons = [];
  if (sub.status === "suspended") {
    if (state.role === "admin") {
      buttons.push(action("Resume", "resume", () => call("POST", `/subscriptions/${id}/resume`)));
    }
  } else if (state.role === "admin") {
    buttons.push(
      action("Suspend", "suspend", () => call("POST", `/subscriptions/${id}/suspend?reason=suspended%20from%20the%20console`)),
    );
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
    el("td", { class: "id" }, sub.id),
    el("td", { class: "name" }, sub.name ?? ""),
    el("td", {}, sub.kind),
    el("td", {}, sub.owner ?? ""),
    el("td", { class: "status" }, status),
    el("td", { class: "text" }, sub.text),
    el("td", {}, buttons),
  );
}

/** The subscriptions the token may see, page after page, at most MAX_LISTED. */
async function listAll() {
  const list = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (cursor) query.set("cursor", cursor);
    const answer = await json("GET", `/subscriptions?${query}`);
    if (Array.isArray(answer)) return answer; // an API without pages
    list.push(...answer.items);
    cursor = answer.next;
  } while (cursor && list.length < MAX_LISTED);
  return list;
}

/** Fetch and draw the subscriptions the token may see. */
export async function loadSubscriptions() {
  try {
    const list = await listAll();
    fill(byId("sub-rows"), list.map(row));
    if (list.length >= MAX_LISTED) flash(`Showing the first ${list.length} subscriptions`);
    for (const listener of state.listeners) listener(list);
  } catch (error) {
    flash(`Could not list the subscriptions: ${error.message}`, true);
  }
}

function checkSoon() {
  clearTimeout(state.timer);
  state.timer = setTimeout(check, 600);
}

export function setUpSubscriptions() {
  byId("sub-form").addEventListener("submit", register);
  byId("sub-check-button").addEventListener("click", check);
  byId("sub-text").addEventListener("input", checkSoon);
  byId("sub-kind").addEventListener("change", checkSoon);
  byId("subs-refresh").addEventListener("click", loadSubscriptions);
}
