// Live notifications of one subscription, or of all of them over one multiplexed stream
// (GET /notifications): the SSE stream read with fetch(), because EventSource cannot send
// the Authorization header. Reconnects from the last id seen (the multiplexed stream's ids
// are cursors; each subscription's last seq is kept so a resumed stream shows none twice).

import { call } from "./api.js";
import { byId, el, fill } from "./dom.js";

/** Most notifications kept on the page (older ones are dropped from the list). */
const MAX_SHOWN = 500;
const RETRY_MS = 1000;
/** The menu's value for the multiplexed stream of all the caller's subscriptions. */
const ALL = "*";

/** The stream being followed: its AbortController and the last id seen (null: none). */
let current = null;

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

/** A notification's lines: its solutions as `?var = term`, anything else as JSON. */
function describe(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return { title: "", lines: [text] };
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    return { title: "", lines: [JSON.stringify(doc)] };
  }
  const { event, count, solutions, subscription, id, ...rest } = doc;
  const title = [event ? `event ${event}` : "", count !== undefined ? `${count} solution(s)` : ""];
  const lines = [];
  for (const solution of Array.isArray(solutions) ? solutions : []) {
    const pairs = Object.entries(solution ?? {}).map(([k, v]) => `?${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`);
    lines.push(pairs.join("   "));
  }
  if (Object.keys(rest).length > 0) lines.push(JSON.stringify(rest, null, 2));
  return { title: title.filter(Boolean).join(", "), lines };
}

function show(frame, seq, sub) {
  const { title, lines } = describe(frame.data.join("\n"));
  const list = byId("note-list");
  list.prepend(
    el(
      "li",
      { "data-seq": seq ?? "" },
      el("strong", {}, `${sub ? `${sub} ` : ""}#${seq ?? "?"} ${title}`),
      lines.map((line) => el("div", { class: "solution" }, line)),
    ),
  );
  while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
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
      if (session.seqs) multiplexed(frame, session);
      else {
        if (frame.id !== null && /^\d+$/.test(frame.id)) session.last = frame.id;
        if (frame.data.length > 0) show(frame, frame.id);
      }
      cut = buffer.indexOf("\n\n");
    }
  }
}

/** One frame of the multiplexed stream: a notification not shown before, its cursor kept. */
function multiplexed(frame, session) {
  if (frame.event === "end") {
    session.controller.abort();
    setState(`stream ended: ${frame.data.join("\n")}`);
    return;
  }
  if (frame.event !== "notification" || frame.data.length === 0) return;
  if (frame.id !== null) session.cursor = frame.id;
  let doc;
  try {
    doc = JSON.parse(frame.data.join("\n"));
  } catch {
    return;
  }
  if ((session.seqs.get(doc.subscription) ?? 0) >= doc.id) return;
  session.seqs.set(doc.subscription, doc.id);
  show(frame, String(doc.id), String(doc.subscription));
}

function streamPath(subId, session) {
  if (subId !== ALL) {
    return `/subscriptions/${encodeURIComponent(subId)}/notifications?after=${session.last}`;
  }
  return session.cursor ? `/notifications?cursor=${encodeURIComponent(session.cursor)}` : "/notifications";
}

async function follow(subId, session) {
  const { signal } = session.controller;
  while (!signal.aborted) {
    try {
      const path = streamPath(subId, session);
      const response = await call("GET", path, { accept: "text/event-stream", signal });
      setState(`watching ${subId}`);
      await read(response, session);
      if (!signal.aborted) setState(`stream of ${subId} closed; reconnecting`);
    } catch (error) {
      if (signal.aborted) return;
      if (error.status && error.status !== 429 && error.status < 500) {
        setState(`cannot watch ${subId}: ${error.message}`);
        return;
      }
      setState(`reconnecting to ${subId}: ${error.message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

export function stopWatching() {
  if (current) current.controller.abort();
  current = null;
  setState("not watching");
}

function start(event) {
  event.preventDefault();
  const subId = byId("watch-sub").value;
  if (!subId) return;
  stopWatching();
  fill(byId("note-list"));
  current = { controller: new AbortController(), last: "0", cursor: null, seqs: null };
  if (subId === ALL) current.seqs = new Map();
  setState(`connecting to ${subId}`);
  follow(subId, current);
}

/** Keep the menu of subscriptions in step with the list (keeping the choice). */
export function updateWatchMenu(subs) {
  const menu = byId("watch-sub");
  const chosen = menu.value;
  fill(menu, [
    el("option", { value: ALL }, "all my subscriptions (one stream)"),
    ...subs.map((s) => el("option", { value: s.id }, s.name ? `${s.id} (${s.name})` : s.id)),
  ]);
  if (chosen === ALL || subs.some((s) => s.id === chosen)) menu.value = chosen;
}

export function setUpNotifications() {
  byId("watch-form").addEventListener("submit", start);
  byId("watch-stop").addEventListener("click", stopWatching);
}
