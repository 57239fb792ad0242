// Live notifications of one subscription, or of all the user's subscriptions over one
// multiplexed stream (GET /notifications): the SSE stream read with fetch(), because
// EventSource cannot send the Authorization header. Reconnects from the last id seen (the
// multiplexed stream's ids are cursors; each subscription's last seq is kept too, so the few
// notifications a lagging cursor sends again are not shown twice).
// Each notification shows when it was made, its event (a link to the event view) and an
// Explain link; a change of the knowledge graph shows what it added (+) and removed (−) and
// the graph's version; IRIs link to the graph browser.

import { call, describeError, query } from "./api.js";
import { byId, el, empty, fill, timeElement } from "./dom.js";
import { graphHref } from "./graph.js";
import { compactTerm } from "./prefixes.js";
import { can, session as who } from "./session.js";

/** Most notifications kept on the page (older ones are dropped from the list). */
const MAX_SHOWN = 500;
const RETRY_MS = 1000;
/** The menu's value for the one stream of all the user's subscriptions (no subscription
 * id is "*": ids are made by the service). */
const ALL = "*";
const ALL_LABEL = "all my subscriptions";

/** The stream being followed: its AbortController and the last id seen (null: none); for
 * all the subscriptions, the last cursor and each subscription's last seq shown. */
let current = null;
/** The subscriptions the watch menu offers. */
let known = [];
/** Whether the user chose in the menu (else its default follows the list). */
let picked = false;

function setState(text) {
  byId("watch-state").textContent = text;
}

function parseFrame(frame) {
  const found = { id: null, event: "message", data: [] };
  for (const line of frame.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") found.id = value;
    else if (field === "event") found.event = value;
    else if (field === "data") found.data.push(value);
  }
  return found;
}

/** A solution's term as CURIE text; an IRI links to it in the graph browser (the graph
 * facts the event met are there, asserted and inferred). */
function termNode(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const short = typeof value === "string" ? compactTerm(value) : text;
  const title = short === text ? null : text;
  const iri = typeof value === "string" ? value.match(/^<([^<>]*)>$/) : null;
  if (iri) return el("a", { class: "term graph-link", title, href: graphHref(iri[1]) }, short);
  return el("span", { class: "term", title }, short);
}

function solutionLines(solutions, sign) {
  return (Array.isArray(solutions) ? solutions : []).map((solution) => {
    const pairs = Object.entries(solution ?? {}).map(([k, v]) => [el("span", { class: "var" }, `?${k}`), " = ", termNode(v), "   "]);
    return el("div", { class: `solution ${sign === "−" ? "removed" : sign ? "added" : ""}` }, sign ? `${sign} ` : null, pairs);
  });
}

/** A subscription as the menu names it: "id (name)", or its id. */
function subLabel(subId) {
  const sub = known.find((s) => s.id === subId);
  return sub && sub.name ? `${subId} (${sub.name})` : subId;
}

/** A notification as the page shows it: a head line and its solutions as ?var = term;
 * `labelled`: the head names its subscription (the stream carries many). */
function describe(text, seq, labelled = false) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return el("li", { "data-seq": seq ?? "" }, el("div", { class: "solution" }, text));
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    return el("li", { "data-seq": seq ?? "" }, el("div", { class: "solution" }, JSON.stringify(doc)));
  }
  const { event, count, solutions, subscription, id, time, ...others } = doc;
  // a change of the knowledge graph: what it added and what it took away
  const { graph_version: version, removed, removed_count: removedCount, removed_truncated: cut, ...rest } = others;
  const change = version !== undefined || removed !== undefined;
  const when = typeof time === "number" ? time : null;
  const head = el(
    "div",
    { class: "note-head" },
    el("strong", {}, `#${seq ?? id ?? "?"}`),
    " ",
    labelled ? [el("span", { class: "note-sub" }, subLabel(subscription)), " "] : null,
    when !== null ? timeElement(when) : el("span", { class: "muted" }, "(no time)"),
    typeof event === "string"
      ? [" event ", el("a", { href: `#event/${encodeURIComponent(event)}`, class: "event-link" }, event)]
      : null,
    count !== undefined ? ` · ${change ? "+" : ""}${count} solution${count === 1 ? "" : "s"}` : null,
    change ? ` · −${removedCount ?? (Array.isArray(removed) ? removed.length : 0)} removed${cut ? " (cut)" : ""}` : null,
    version !== undefined ? [" · ", el("a", { href: "#graph", class: "graph-version" }, `graph version ${version}`)] : null,
    typeof event === "string" && typeof subscription === "string"
      ? [
          " · ",
          el(
            "a",
            { href: `#explain/${encodeURIComponent(subscription)}/${encodeURIComponent(event)}`, class: "explain-link" },
            "Explain",
          ),
        ]
      : null,
  );
  const lines = [...solutionLines(solutions, change ? "+" : ""), ...solutionLines(removed, "−")];
  if (Object.keys(rest).length > 0) lines.push(el("pre", { class: "rest" }, JSON.stringify(rest, null, 2)));
  const sub = labelled ? subscription : null;
  return el("li", { "data-seq": seq ?? "", "data-sub": sub, "data-time": when ?? "" }, head, lines);
}

function show(text, seq, labelled = false) {
  const list = byId("note-list");
  byId("note-empty").hidden = true;
  list.prepend(describe(text, seq, labelled));
  while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
}

/** One frame of a subscription's stream: its id is the seq. */
function single(frame, session) {
  if (frame.id !== null && /^\d+$/.test(frame.id)) session.last = frame.id;
  if (frame.data.length > 0) show(frame.data.join("\n"), frame.id);
}

/** The last frame of a stream, saying why it ends (a revoked token): not a notification,
 * and no reconnecting. */
function end(frame, session) {
  const text = frame.data.join("\n");
  let why = text;
  try {
    why = JSON.parse(text).detail ?? text;
  } catch {
    // not JSON: said as it came
  }
  session.controller.abort();
  setState(`stream ended: ${why}`);
}

/** One frame of the multiplexed stream: a notification not shown before (its cursor kept). */
function multiplexed(frame, session) {
  const text = frame.data.join("\n");
  if (frame.event !== "notification" || text === "") return; // "subscriptions": the set changed
  if (frame.id) session.cursor = frame.id;
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return;
  }
  const sub = doc?.subscription;
  const seq = doc?.id;
  if (typeof sub !== "string" || !Number.isInteger(seq)) return;
  if ((session.seqs.get(sub) ?? 0) >= seq) return; // sent again after a resume
  session.seqs.set(sub, seq);
  show(text, String(seq), true);
}

async function read(response, session) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!session.controller.signal.aborted) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer = (buffer + value).replace(/\r\n/g, "\n");
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const frame = parseFrame(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (session !== current) return; // stopped, or another subscription chosen
      if (frame.event === "end") return end(frame, session);
      if (session.seqs) multiplexed(frame, session);
      else single(frame, session);
      cut = buffer.indexOf("\n\n");
    }
  }
}

/** Where the stream goes on from: a subscription's after its last seq, the multiplexed one
 * from its last cursor (from the start without one). */
function streamPath(subId, session) {
  if (!session.seqs) return `/subscriptions/${encodeURIComponent(subId)}/notifications?after=${session.last}`;
  return session.cursor ? `/notifications?${query({ cursor: session.cursor })}` : "/notifications";
}

async function follow(subId, session) {
  const { signal } = session.controller;
  const label = subId === ALL ? ALL_LABEL : subId;
  while (!signal.aborted) {
    try {
      const response = await call("GET", streamPath(subId, session), { accept: "text/event-stream", signal });
      setState(`watching ${label}`);
      await read(response, session);
      if (!signal.aborted) setState(`stream of ${label} closed; reconnecting`);
    } catch (error) {
      if (signal.aborted) return;
      if (error.status && error.status !== 429 && error.status < 500) {
        setState(`cannot watch ${label}: ${describeError(error)}`);
        return;
      }
      setState(`reconnecting to ${label}: ${describeError(error)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** Stop the stream (`forget`: the menu's choice too, as on logging out). */
export function stopWatching({ forget = false } = {}) {
  if (current) current.controller.abort();
  current = null;
  if (forget) picked = false;
  setState("not watching");
}

/** Follow a subscription's stream (`ALL`: the multiplexed stream of all the user's
 * subscriptions) from its first stored notification. */
export function watch(subId) {
  stopWatching();
  fill(byId("note-list"));
  const all = subId === ALL;
  fill(
    byId("note-empty"),
    all
      ? empty("No notification of your subscriptions yet.", "They appear here, newest first, each with its subscription, as events match them.")
      : empty(`No notification of ${subId} yet.`, "They appear here, newest first, as events match it."),
  );
  byId("note-empty").hidden = false;
  current = { controller: new AbortController(), last: "0", cursor: null, seqs: all ? new Map() : null };
  setState(`connecting to ${all ? ALL_LABEL : subId}`);
  follow(subId, current);
}

function start(event) {
  event.preventDefault();
  const subId = byId("watch-sub").value;
  picked = true; // a list reloaded while watching keeps what is watched chosen
  if (subId) watch(subId);
}

function drawMenuState() {
  const none = known.length === 0;
  byId("watch-form").hidden = none;
  if (none && current === null) {
    fill(byId("note-empty"), empty("No subscription to watch.", "Register one under Subscriptions first."));
    byId("note-empty").hidden = false;
  } else if (current === null) {
    fill(
      byId("note-empty"),
      empty("Not watching.", `Choose a subscription, or ${ALL_LABEL}, and Watch: stored notifications come first, then new ones live.`),
    );
    byId("note-empty").hidden = false;
  }
}

/** Keep the menu of subscriptions in step with the list (keeping the user's choice; else
 * all of them when the user owns more than one: an admin lists others' too). */
export function updateWatchMenu(subs) {
  known = subs;
  const menu = byId("watch-sub");
  const chosen = menu.value;
  fill(menu, [
    el("option", { value: ALL }, ALL_LABEL),
    ...subs.map((s) => el("option", { value: s.id }, subLabel(s.id))),
  ]);
  const own = subs.filter((s) => !can("admin") || s.owner === who.subject).length;
  if (picked && (chosen === ALL || subs.some((s) => s.id === chosen))) menu.value = chosen;
  else menu.value = own > 1 || subs.length === 0 ? ALL : subs[0].id;
  drawMenuState();
}

/** Choose `subId` in the menu (adding it if the list has not been read yet) and watch it. */
export function chooseAndWatch(subId) {
  const menu = byId("watch-sub");
  if (![...menu.options].some((o) => o.value === subId)) menu.append(el("option", { value: subId }, subId));
  menu.value = subId;
  picked = true;
  byId("watch-form").hidden = false;
  watch(subId);
}

export function setUpNotifications() {
  byId("watch-form").addEventListener("submit", start);
  byId("watch-sub").addEventListener("change", () => {
    picked = true;
  });
  byId("watch-stop").addEventListener("click", () => {
    stopWatching();
    drawMenuState();
  });
  drawMenuState();
}
