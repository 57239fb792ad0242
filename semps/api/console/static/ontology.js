// The ontology panel: its summary, the class and property trees drawn a level at a time
// (only what is expanded is in the page), search by label, CURIE or IRI, the named axioms
// in pages, and (admin) adding and removing axioms and uploading files.

import { call, describeError, json, query, sendJson } from "./api.js";
import { byId, count, el, empty, fill, flash } from "./dom.js";
import { compact, setOntologyPrefixes, tryExpand, expand } from "./prefixes.js";
import { can } from "./session.js";
import { drawStore, storeTop } from "./storepanel.js";

/** Entities asked for per page of a level, hits per search, axioms per page. */
const PAGE = 100;
const HITS = 50;
const AXIOMS = 100;

const UPLOAD_TYPES = {
  ttl: "text/turtle",
  nt: "application/n-triples",
  owl: "application/rdf+xml",
  rdf: "application/rdf+xml",
  xml: "application/rdf+xml",
  jsonld: "application/ld+json",
  json: "application/ld+json",
};

const TREES = { classes: "class-tree", properties: "property-tree" };

const state = { loads: 0, version: null, axiomOffset: 0, searchTimer: null, filterTimer: null, searches: 0 };
/** Each level list (ul) drawn: its tree, parent, total and the offsets loaded. */
const levels = new WeakMap();
/** Called after the ontology's prefixes change (the other panels redraw their names). */
const prefixListeners = [];

export function onOntologyPrefixes(listener) {
  prefixListeners.push(listener);
}

function iriSpan(iri) {
  return el("span", { class: "iri", title: iri }, compact(iri));
}

function entityRow(tree, item) {
  const tags = [...(item.kinds || []), ...(item.characteristics || [])];
  const li = el("li", { "data-iri": item.iri });
  const opener =
    item.children > 0
      ? el("button", {
          type: "button",
          class: "toggle",
          "aria-expanded": "false",
          "aria-label": `show the ${item.children} below`,
          onClick: () => toggleRow(tree, li),
        }, "▸")
      : el("span", { class: "leaf", "aria-hidden": "true" }, "·");
  li.append(
    el(
      "div",
      { class: "entity" },
      opener,
      iriSpan(item.iri),
      item.label ? el("span", { class: "label" }, ` ${item.label}`) : null,
      tags.map((t) => el("span", { class: "tag" }, t)),
      item.children > 0 ? el("span", { class: "count muted" }, ` ${count(item.children)}`) : null,
    ),
  );
  return li;
}

function directChild(ul, iri) {
  for (const li of ul.children) if (li.dataset.iri === iri) return li;
  return null;
}

/** Load one page of a level into its list (`focus`: the page holding that entity). */
async function loadPage(ul, { offset = 0, focus = null } = {}) {
  const level = levels.get(ul);
  const params = { tree: level.tree, parent: level.parent, offset, limit: PAGE, focus };
  const page = await json("GET", `/console/api/ontology-tree?${query(params)}`);
  level.total = page.total;
  level.loaded.add(page.offset);
  for (const more of ul.querySelectorAll(":scope > li.more")) more.remove();
  for (const item of page.items) {
    if (!directChild(ul, item.iri)) ul.append(entityRow(level.tree, item));
  }
  const shown = ul.querySelectorAll(":scope > li[data-iri]").length;
  if (shown < level.total) {
    const next = () => {
      let at = 0;
      while (level.loaded.has(at)) at += PAGE;
      loadPage(ul, { offset: at }).catch((error) => flash(describeError(error), true));
    };
    ul.append(
      el("li", { class: "more" }, el("button", { type: "button", onClick: next }, `Show more (${count(shown)} of ${count(level.total)})`)),
    );
  }
  return page;
}

function newLevel(tree, parent) {
  const ul = el("ul", { class: parent === null ? "tree" : "" });
  levels.set(ul, { tree, parent, total: 0, loaded: new Set() });
  return ul;
}

/** Expand (loading its children once) or collapse an entity's row. */
async function toggleRow(tree, li, open = null) {
  const button = li.querySelector(":scope > .entity > .toggle");
  if (!button) return null;
  let ul = li.querySelector(":scope > ul");
  const opening = open ?? button.getAttribute("aria-expanded") !== "true";
  if (opening && ul === null) {
    ul = newLevel(tree, li.dataset.iri);
    li.append(ul);
    try {
      await loadPage(ul);
    } catch (error) {
      ul.remove();
      flash(`Could not expand ${compact(li.dataset.iri)}: ${describeError(error)}`, true);
      return null;
    }
  }
  if (ul !== null) ul.hidden = !opening;
  button.setAttribute("aria-expanded", String(opening));
  button.textContent = opening ? "▾" : "▸";
  return ul;
}

/** Expand the tree along `path` (root first) down to `iri`, and point at it. */
async function reveal(tree, path, iri) {
  let ul = byId(TREES[tree]).querySelector(":scope > ul");
  for (const step of [...path, iri]) {
    let li = directChild(ul, step);
    if (li === null) {
      await loadPage(ul, { focus: step });
      li = directChild(ul, step);
    }
    if (li === null) return;
    if (step === iri) {
      for (const old of document.querySelectorAll(".entity.found")) old.classList.remove("found");
      li.querySelector(":scope > .entity").classList.add("found");
      li.scrollIntoView({ block: "center" });
      return;
    }
    ul = await toggleRow(tree, li, true);
    if (ul === null) return;
  }
}

async function drawRoots(tree, mine) {
  const holder = byId(TREES[tree]);
  const ul = newLevel(tree, null);
  const page = await loadPage(ul);
  if (mine !== state.loads) return; // a later load draws
  fill(holder, page.total === 0 ? empty(tree === "classes" ? "No classes." : "No properties.") : ul);
}

// -- search ------------------------------------------------------------------------------

function hitRow(tree, hit) {
  const path = hit.path.length > 0 ? el("span", { class: "path muted" }, ` in ${hit.path.map(compact).join(" › ")}`) : null;
  return el(
    "li",
    { "data-iri": hit.iri },
    el("button", { type: "button", class: "link", onClick: () => reveal(tree, hit.path, hit.iri) }, compact(hit.iri)),
    hit.label ? el("span", { class: "label" }, ` ${hit.label}`) : null,
    path,
  );
}

async function search() {
  const text = byId("onto-search").value.trim();
  const mine = ++state.searches;
  const box = byId("search-results");
  if (text === "") {
    fill(box);
    box.hidden = true;
    return;
  }
  // A CURIE with a known prefix is searched as its IRI; anything else as typed.
  const needle = /^[A-Za-z][\w.-]*:\S/.test(text) && !text.includes("//") ? tryExpand(text) || text : text;
  try {
    const [classes, properties] = await Promise.all(
      ["classes", "properties"].map((tree) =>
        json("GET", `/console/api/ontology-search?${query({ tree, q: needle, limit: HITS })}`),
      ),
    );
    if (mine !== state.searches) return;
    const section = (tree, found, title) =>
      el(
        "section",
        { "data-tree": tree },
        el("h4", {}, `${title}: ${found.total > found.items.length ? `first ${found.items.length} of ` : ""}${count(found.total)}`),
        found.items.length > 0 ? el("ol", { class: "hits" }, found.items.map((h) => hitRow(tree, h))) : null,
      );
    const none = classes.total + properties.total === 0;
    fill(
      box,
      none ? empty(`Nothing in the ontology matches “${text}”.`, "Search looks in labels and IRIs; a CURIE is searched as its IRI.") : null,
      none ? null : section("classes", classes, "Classes"),
      none ? null : section("properties", properties, "Properties"),
    );
    box.hidden = false;
  } catch (error) {
    if (mine === state.searches) flash(`Search failed: ${describeError(error)}`, true);
  }
}

// -- axioms ------------------------------------------------------------------------------

async function changeAxiom(method, axiom) {
  const [done, verb] = method === "POST" ? ["Added", "add"] : ["Removed", "remove"];
  try {
    const answer = await sendJson(method, "/ontology/axioms", axiom);
    await loadOntology();
    const shown = `${compact(axiom.subject)} ${axiom.kind} ${compact(axiom.object)}`;
    flash(`${done} ${shown} (version ${answer.version})`);
  } catch (error) {
    flash(`Could not ${verb} the axiom: ${describeError(error)}`, true);
  }
}

function axiomRow(axiom) {
  const remove = can("admin")
    ? el("button", { type: "button", class: "remove-axiom", onClick: () => changeAxiom("DELETE", axiom) }, "Remove")
    : null;
  return el(
    "tr",
    {},
    el("td", {}, iriSpan(axiom.subject)),
    el("td", {}, axiom.kind),
    el("td", {}, iriSpan(axiom.object)),
    el("td", {}, remove),
  );
}

async function loadAxioms(offset = state.axiomOffset) {
  const raw = byId("axiom-filter").value.trim();
  const text = /^[A-Za-z][\w.-]*:\S/.test(raw) && !raw.includes("//") ? tryExpand(raw) || raw : raw;
  const page = await json("GET", `/console/api/ontology-axioms?${query({ q: text, offset, limit: AXIOMS })}`);
  state.axiomOffset = page.offset;
  const body = byId("axiom-rows");
  if (page.total === 0) {
    fill(body, el("tr", {}, el("td", { colspan: "4" }, empty(raw ? `No axiom mentions “${raw}”.` : "No axioms."))));
  } else {
    fill(body, page.items.map(axiomRow));
  }
  const last = Math.min(page.offset + page.items.length, page.total);
  byId("axiom-range").textContent =
    page.total === 0 ? "" : `${count(page.offset + 1)}–${count(last)} of ${count(page.total)}`;
  byId("axiom-prev").disabled = page.offset === 0;
  byId("axiom-next").disabled = last >= page.total;
}

function filterSoon() {
  clearTimeout(state.filterTimer);
  state.filterTimer = setTimeout(() => loadAxioms(0).catch((e) => flash(describeError(e), true)), 250);
}

// -- the whole panel -----------------------------------------------------------------------

function drawSummary(summary) {
  const sizes = `${count(summary.classes)} classes · ${count(summary.properties)} properties · ${count(summary.axioms)} axioms`;
  const isEmpty = summary.classes + summary.properties + summary.axioms === 0;
  const hint = can("admin") ? "Upload an ontology file or add an axiom below." : "An admin loads one (PUT /ontology).";
  drawStore("onto", summary.version, sizes, isEmpty ? empty("The ontology is empty.", hint) : null);
}

/** Fetch the summary, the trees' first levels and the first page of axioms, and draw them. */
export async function loadOntology() {
  const mine = ++state.loads; // only the latest load draws (a tab switch and an edit may overlap)
  try {
    const summary = await json("GET", "/console/api/ontology-summary");
    if (mine !== state.loads) return;
    setOntologyPrefixes(summary.namespaces);
    for (const listener of prefixListeners) listener();
    drawSummary(summary);
    await drawRoots("classes", mine);
    if (mine !== state.loads) return;
    performance.mark("semps:classes-painted");
    await Promise.all([drawRoots("properties", mine), loadAxioms(0)]);
    // hits of an older version are searched again (a search typed meanwhile saw this one)
    const changed = state.version !== null && state.version !== summary.version;
    state.version = summary.version;
    if (mine === state.loads && changed && byId("onto-search").value.trim() !== "") await search();
  } catch (error) {
    if (mine === state.loads) flash(`Could not load the ontology: ${describeError(error)}`, true);
  }
}

/** Only the prefixes, for the other panels' names (no trees drawn). */
export async function loadOntologyPrefixes() {
  const summary = await json("GET", "/console/api/ontology-summary");
  setOntologyPrefixes(summary.namespaces);
}

/** Show what a CURIE or IRI field expands to, or why it cannot. */
function preview(input, output) {
  const text = input.value.trim();
  if (text === "") {
    output.textContent = "";
    output.classList.remove("bad");
    return;
  }
  try {
    output.textContent = `= ${expand(text)}`;
    output.classList.remove("bad");
  } catch (error) {
    output.textContent = error.message;
    output.classList.add("bad");
  }
}

async function addAxiom(event) {
  event.preventDefault();
  let subject;
  let object;
  try {
    subject = expand(byId("axiom-subject").value);
    object = expand(byId("axiom-object").value);
  } catch (error) {
    flash(`Not added: ${error.message}`, true);
    return;
  }
  await changeAxiom("POST", { kind: byId("axiom-kind").value, subject, object });
}

async function upload(event) {
  event.preventDefault();
  const file = byId("upload-file").files[0];
  if (!file) return;
  const extension = file.name.split(".").pop().toLowerCase();
  const type = UPLOAD_TYPES[extension] || file.type || "application/rdf+xml";
  const method = byId("upload-mode").value;
  try {
    const response = await call(method, "/ontology", { body: file, type });
    const answer = await response.json();
    await loadOntology();
    flash(`Uploaded ${file.name} as ${type} (version ${answer.version})`);
  } catch (error) {
    flash(`Could not upload ${file.name}: ${describeError(error)}`, true);
  }
}

export function setUpOntology() {
  storeTop("onto", {
    title: "Ontology",
    search: "Search classes and properties: a label, a CURIE (brick:AHU) or part of an IRI",
    label: "Search the ontology",
  });
  byId("axiom-form").addEventListener("submit", addAxiom);
  for (const side of ["subject", "object"]) {
    const input = byId(`axiom-${side}`);
    input.addEventListener("input", () => preview(input, byId(`axiom-${side}-iri`)));
  }
  byId("upload-form").addEventListener("submit", upload);
  byId("onto-refresh").addEventListener("click", loadOntology);
  byId("onto-search").addEventListener("input", () => {
    clearTimeout(state.searchTimer);
    state.searchTimer = setTimeout(search, 250);
  });
  byId("axiom-filter").addEventListener("input", filterSoon);
  const turn = (delta) => loadAxioms(Math.max(0, state.axiomOffset + delta)).catch((e) => flash(describeError(e), true));
  byId("axiom-prev").addEventListener("click", () => turn(-AXIOMS));
  byId("axiom-next").addEventListener("click", () => turn(AXIOMS));
}
