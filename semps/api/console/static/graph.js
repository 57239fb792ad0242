// The knowledge graph panel: its sizes (GET /graph/info), its subjects a page at a time,
// searched by CURIE, IRI or label (GET /graph/resources), one resource's triples with the
// inferred ones marked (GET /graph/resource, #graph/IRI), and, for publishers and admins, a
// SPARQL Update form (POST /graph).

import { ApiError, describeError, json, query } from "./api.js";
import { byId, count, el, empty, fill, flash, grid } from "./dom.js";
import { compact, compactTerm, declareMissing, tryExpand } from "./prefixes.js";
import { can } from "./session.js";
import { drawStore, storeTop } from "./storepanel.js";

/** Subjects per page, and triples shown each way for a resource. */
const PAGE = 100;
const TRIPLES = 200;

const state = { loads: 0, afters: [null], q: "", searchTimer: null, shown: null };

/** The hash that opens a resource in the graph browser. */
export function graphHref(iri) {
  return `#graph/${encodeURIComponent(iri)}`;
}

/** An N-Triples term as CURIE text; an IRI (and a blank node of the graph, with `blanks`)
 * links to its resource. */
export function termCell(term, { blanks = true } = {}) {
  const iri = term.match(/^<([^<>]*)>$/);
  const target = iri ? iri[1] : blanks && term.startsWith("_:") ? term : null;
  const text = compactTerm(term);
  const title = text === term ? null : term;
  if (target === null) return el("span", { class: "term", title }, text);
  return el("a", { href: graphHref(target), class: "term graph-link", title }, text);
}

function subjectRow(item) {
  return el(
    "tr",
    { "data-iri": item.iri },
    el("td", {}, el("a", { href: graphHref(item.iri), class: "graph-link iri", title: item.iri }, compact(item.iri))),
    el("td", { class: "label" }, item.label ?? ""),
    el("td", { class: "num" }, count(item.asserted)),
    el("td", { class: "num" }, count(item.triples - item.asserted)),
  );
}

function needle() {
  const text = byId("graph-search").value.trim();
  // A CURIE with a known prefix is searched as its IRI; anything else as typed.
  return /^[A-Za-z][\w.-]*:\S/.test(text) && !text.includes("//") ? tryExpand(text) || text : text;
}

async function loadPage() {
  const after = state.afters[state.afters.length - 1];
  const page = await json("GET", `/graph/resources?${query({ q: state.q, after, limit: PAGE })}`);
  const first = (state.afters.length - 1) * PAGE;
  const body = byId("graph-rows");
  if (page.total === 0) {
    const what = state.q ? `No subject's IRI or label holds “${byId("graph-search").value.trim()}”.` : "No subjects.";
    fill(body, el("tr", {}, el("td", { colspan: "4" }, empty(what))));
  } else {
    fill(body, page.items.map(subjectRow));
    for (const row of body.children) row.classList.toggle("chosen", row.dataset.iri === state.shown);
  }
  byId("graph-range").textContent =
    page.total === 0 ? "" : `${count(first + 1)}–${count(first + page.items.length)} of ${count(page.total)}`;
  byId("graph-prev").disabled = state.afters.length === 1;
  byId("graph-next").disabled = page.next === null;
  state.next = page.next;
}

function turn(forward) {
  if (forward && state.next) state.afters.push(state.next);
  else if (!forward && state.afters.length > 1) state.afters.pop();
  loadPage().catch((error) => flash(describeError(error), true));
}

function searchSoon() {
  clearTimeout(state.searchTimer);
  state.searchTimer = setTimeout(() => {
    state.q = needle();
    state.afters = [null];
    loadPage().catch((error) => flash(`Search failed: ${describeError(error)}`, true));
  }, 250);
}

function drawInfo(info) {
  const sizes =
    `${count(info.triples)} triples · ${count(info.asserted)} asserted · ` +
    `${count(info.triples - info.asserted)} inferred · ${count(info.terms)} terms`;
  const isEmpty = info.triples === 0;
  const hint = can("publisher") ? "Load one (PUT /graph) or insert triples with an update below." : "A publisher loads one (PUT /graph).";
  drawStore("graph", info.version, sizes, isEmpty ? empty("The knowledge graph is empty.", hint) : null);
}

/** Which resource the panel shows under the list (null: none): #graph/IRI or #graph. */
export function focusResource(iri) {
  state.shown = iri;
  const box = byId("graph-resource");
  if (iri === null) fill(box);
  box.hidden = iri === null;
}

/** Read the sizes and the current page again (after an edit, a tab switch, Refresh). */
export async function loadGraph() {
  const mine = ++state.loads;
  try {
    const info = await json("GET", "/graph/info");
    if (mine !== state.loads) return;
    drawInfo(info);
    if (info.triples > 0) await loadPage();
    if (state.shown !== null && mine === state.loads) await showResource(state.shown);
  } catch (error) {
    if (mine !== state.loads) return;
    if (error instanceof ApiError && error.noRoute()) {
      fill(byId("graph-empty"), empty("This server has no knowledge graph (GET /graph/info).", "It comes with a later version of the service."));
      byId("graph-browse").hidden = true;
    } else {
      flash(`Could not read the knowledge graph: ${describeError(error)}`, true);
    }
  }
}

function tripleTable(kind, rows, total) {
  const head = kind === "outgoing" ? ["predicate", "object"] : ["subject", "predicate"];
  const shown = rows.length < total ? ` (first ${count(rows.length)} of ${count(total)})` : ` (${count(total)})`;
  return [
    el("h4", {}, kind === "outgoing" ? `As subject${shown}` : `As object${shown}`),
    total === 0
      ? el("p", { class: "muted" }, "none")
      : grid(
          { class: `grid triples ${kind}` },
          [...head, ""],
          rows.map((t) => {
            const [a, b] = kind === "outgoing" ? [t.predicate, t.object] : [t.subject, t.predicate];
            return el(
              "tr",
              { class: t.asserted ? "asserted" : "inferred" },
              el("td", {}, termCell(a)),
              el("td", {}, termCell(b)),
              el("td", {}, el("span", { class: "tag" }, t.asserted ? "asserted" : "inferred")),
            );
          }),
        ),
  ];
}

/** Show one resource's triples under the list (the target of #graph/IRI). */
export async function showResource(iri) {
  state.shown = iri;
  for (const row of byId("graph-rows").children) row.classList.toggle("chosen", row.dataset.iri === iri);
  const box = byId("graph-resource");
  box.hidden = false;
  const title = el("h3", {}, el("span", { class: "iri", title: iri }, compact(iri)));
  fill(box, title, el("p", { class: "muted" }, "Reading…"));
  try {
    const doc = await json("GET", `/graph/resource?${query({ iri, limit: TRIPLES })}`);
    if (state.shown !== iri) return;
    const inferred = [...doc.outgoing, ...doc.incoming].filter((t) => !t.asserted).length;
    fill(
      box,
      title,
      doc.label ? el("p", { class: "label" }, doc.label) : null,
      el("p", { class: "muted" }, `graph version ${doc.version} · ${inferred} of the triples shown are inferred`),
      tripleTable("outgoing", doc.outgoing, doc.outgoing_total),
      tripleTable("incoming", doc.incoming, doc.incoming_total),
    );
  } catch (error) {
    if (state.shown === iri) fill(box, title, empty(describeError(error)));
  }
}

async function runUpdate(event) {
  event.preventDefault();
  const result = byId("graph-update-result");
  try {
    const answer = await json("POST", "/graph", { body: byId("graph-update").value, type: "application/sparql-update" });
    result.textContent =
      `Done: version ${answer.version}, ${answer.inserted} inserted, ${answer.deleted} deleted, ` +
      `${answer.inferred_added} inferred added, ${answer.inferred_removed} inferred removed, ` +
      `${answer.notified} notification(s).`;
    result.classList.remove("error");
    await loadGraph();
  } catch (error) {
    result.textContent = `Not applied: ${describeError(error)}`;
    result.classList.add("error");
  }
}

export function setUpGraph() {
  storeTop("graph", {
    title: "Knowledge graph",
    search: "Search subjects: a CURIE (site:B1-AHU-1), part of an IRI, or part of a label",
    label: "Search the knowledge graph",
  });
  byId("graph-refresh").addEventListener("click", loadGraph);
  byId("graph-search").addEventListener("input", searchSoon);
  byId("graph-prev").addEventListener("click", () => turn(false));
  byId("graph-next").addEventListener("click", () => turn(true));
  byId("graph-update-form").addEventListener("submit", runUpdate);
  byId("graph-update-prefixes").addEventListener("click", () => declareMissing(byId("graph-update"), "sparql", "update"));
}
