// The event view and the explanation of a notification: the targets of the links in the
// notifications (#event/ID, #explain/SUB/EVENT). Each shows what the server answers
// (GET /events/{id}, POST /subscriptions/{id}/explain?event=ID) as text; a server without
// those routes is said to be so. The event's IRIs link to the graph browser (#graph/IRI): what
// the knowledge graph knows of them.

import { describeError, json, query } from "./api.js";
import { byId, el, empty, fill } from "./dom.js";
import { termCell } from "./graph.js";

function triplesTable(triples) {
  return el(
    "table",
    { class: "grid triples" },
    el("thead", {}, el("tr", {}, el("th", {}, "subject"), el("th", {}, "predicate"), el("th", {}, "object"))),
    el(
      "tbody",
      {},
      triples.map((t) => {
        const [s, p, o] = Array.isArray(t) ? t : [t.subject, t.predicate, t.object];
        return el("tr", {}, [s, p, o].map((term) => el("td", { title: String(term) }, termCell(String(term), { blanks: false }))));
      }),
    ),
  );
}

/** A document as the server gave it: its triples as a table when it has some, the rest as
 * indented JSON text. */
function drawDocument(doc) {
  if (doc && typeof doc === "object" && typeof doc.text === "string") return el("pre", { class: "doc" }, doc.text);
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
  const closed = byId("view-closed").checked;
  const path = `/events/${encodeURIComponent(eventId)}?${query({ closed: closed ? "true" : null })}`;
  byId("view-closed").onchange = () => showEvent(eventId);
  return showAnswer(() => json("GET", path), "This server does not offer the event view (GET /events/{id}).");
}

/** Explain why a subscription matched an event (or did not). */
export function showExplain(subId, eventId) {
  fill(byId("view-title"), "Why ", el("code", {}, subId), " matched ", el("code", {}, eventId));
  byId("view-closed-row").hidden = true;
  const path = `/subscriptions/${encodeURIComponent(subId)}/explain?${query({ event: eventId })}`;
  return showAnswer(
    () => json("POST", path),
    "This server does not offer explanations (POST /subscriptions/{id}/explain).",
  );
}
