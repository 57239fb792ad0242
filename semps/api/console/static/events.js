// The event view and the explanations: the targets of the links in the notifications
// (#event/ID, #explain/SUB/EVENT) and of a subscription's Explain button (#explain/SUB). Each
// shows what the server answers (GET /events/{id}, POST /subscriptions/{id}/explain with
// ?event=ID or the event itself as the body) as text, the explanation's IRIs with the known
// prefixes; a server without those routes is said to be so. The event's IRIs link to the
// graph browser (#graph/IRI): what the knowledge graph knows of them.

import { describeError, json, query } from "./api.js";
import { bodyButtons } from "./bodyform.js";
import { byId, el, empty, fill, grid } from "./dom.js";
import { termCell } from "./graph.js";
import { compactText } from "./prefixes.js";

const NO_EXPLAIN = "This server does not offer explanations (POST /subscriptions/{id}/explain).";
/** The subscription the explain form asks about. */
const explaining = { subId: null };

function triplesTable(triples) {
  return grid(
    { class: "grid triples" },
    ["subject", "predicate", "object"],
    triples.map((t) => {
      const [s, p, o] = Array.isArray(t) ? t : [t.subject, t.predicate, t.object];
      return el("tr", {}, [s, p, o].map((term) => el("td", { title: String(term) }, termCell(String(term), { blanks: false }))));
    }),
  );
}

/** A document as the server gave it: its triples as a table when it has some, the rest as
 * indented JSON text. */
function drawDocument(doc) {
  if (doc && typeof doc === "object" && typeof doc.text === "string") return el("pre", { class: "doc" }, compactText(doc.text));
  const { triples, ...rest } = doc && typeof doc === "object" ? doc : { value: doc };
  return [
    Array.isArray(triples) ? triplesTable(triples) : null,
    Object.keys(rest).length > 0 ? el("pre", { class: "doc" }, JSON.stringify(rest, null, 2)) : null,
  ];
}

async function showAnswer(ask, missing) {
  const body = byId("view-body");
  fill(body, el("p", { class: "muted" }, "Reading…"));
  try {
    fill(body, drawDocument(await ask()));
  } catch (error) {
    if (error.noRoute && error.noRoute()) fill(body, empty(missing, "It comes with a later version of the service."));
    else fill(body, empty(describeError(error)));
  }
}

/** Show one event (the view's `closed` box asks for it after inference). */
export function showEvent(eventId) {
  fill(byId("view-title"), "Event ", el("code", {}, eventId));
  byId("view-closed-row").hidden = false;
  byId("explain-form").hidden = true;
  const closed = byId("view-closed").checked;
  const path = `/events/${encodeURIComponent(eventId)}?${query({ closed: closed ? "true" : null })}`;
  byId("view-closed").onchange = () => showEvent(eventId);
  return showAnswer(() => json("GET", path), "This server does not offer the event view (GET /events/{id}).");
}

function explainPath(subId, params = {}) {
  return `/subscriptions/${encodeURIComponent(subId)}/explain?${query(params)}`;
}

/** Explain why a subscription matched a stored event (or did not); without an event, the
 * form asks for one (a stored event's id, or an event pasted in). */
export function showExplain(subId, eventId = null) {
  const about = eventId === null ? "an event" : el("code", {}, eventId);
  fill(byId("view-title"), "Why ", el("code", {}, subId), " matches ", about, ", or not");
  byId("view-closed-row").hidden = true;
  byId("explain-form").hidden = false;
  explaining.subId = subId;
  byId("explain-event").value = eventId ?? "";
  if (eventId === null) {
    fill(byId("view-body"), empty("Name a stored event by its id, or paste an event, and Explain.", "A pasted event is explained, never published."));
    return Promise.resolve();
  }
  byId("explain-body").value = "";
  return showAnswer(() => json("POST", explainPath(subId, { event: eventId })), NO_EXPLAIN);
}

/** The explain form: a pasted event is posted as the body; else the stored event named. */
function explainForm(event) {
  event.preventDefault();
  const subId = explaining.subId;
  const body = byId("explain-body").value;
  const eventId = byId("explain-event").value.trim();
  if (body.trim() !== "") {
    fill(byId("view-title"), "Why ", el("code", {}, subId), " matches the event given, or not");
    const type = byId("explain-type").value;
    showAnswer(() => json("POST", explainPath(subId), { body, type }), NO_EXPLAIN);
  } else if (eventId !== "") {
    const hash = `#explain/${encodeURIComponent(subId)}/${encodeURIComponent(eventId)}`;
    if (location.hash === hash) showExplain(subId, eventId);
    else location.hash = hash;
  } else {
    fill(byId("view-body"), empty("Give a stored event's id, or paste an event."));
  }
}

export function setUpExplain() {
  bodyButtons("explain", "Explain", "event", "events");
  byId("explain-form").addEventListener("submit", explainForm);
}
