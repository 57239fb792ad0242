// The ontology panel: class and property trees, the named axioms (add, remove), uploads.

import { call, json, sendJson } from "./api.js";
import { byId, el, fill, flash } from "./dom.js";

/** Most tree rows drawn (an entity with several parents is drawn under each). */
const MAX_ROWS = 5000;

const UPLOAD_TYPES = {
  ttl: "text/turtle",
  nt: "application/n-triples",
  owl: "application/rdf+xml",
  rdf: "application/rdf+xml",
  xml: "application/rdf+xml",
  jsonld: "application/ld+json",
  json: "application/ld+json",
};

function treeRows(entities) {
  const known = new Set(entities.map((e) => e.iri));
  const children = new Map();
  const roots = [];
  for (const entity of entities) {
    const parents = entity.parents.filter((p) => known.has(p));
    if (parents.length === 0) roots.push(entity);
    for (const p of parents) {
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(entity);
    }
  }
  const budget = { rows: 0 };
  const draw = (entity, ancestors) => {
    budget.rows += 1;
    const tags = [...(entity.kinds || []), ...(entity.characteristics || [])];
    const row = el(
      "li",
      { "data-iri": entity.iri },
      el("span", { class: "iri" }, entity.iri),
      entity.label ? el("span", { class: "label" }, ` "${entity.label}"`) : null,
      tags.map((t) => el("span", { class: "tag" }, t)),
    );
    const below = (children.get(entity.iri) || []).filter((c) => !ancestors.has(c.iri));
    if (below.length > 0 && budget.rows < MAX_ROWS) {
      const next = new Set(ancestors).add(entity.iri);
      row.append(el("ul", {}, below.map((c) => draw(c, next))));
    }
    return row;
  };
  // Entities on a subClassOf cycle have no root: draw them at the top too.
  const drawn = roots.map((r) => draw(r, new Set()));
  const reached = new Set();
  const mark = (iri) => {
    if (reached.has(iri)) return;
    reached.add(iri);
    for (const c of children.get(iri) || []) mark(c.iri);
  };
  roots.forEach((r) => mark(r.iri));
  for (const entity of entities) {
    if (!reached.has(entity.iri)) {
      mark(entity.iri);
      drawn.push(draw(entity, new Set()));
    }
  }
  return drawn;
}

/** Add (POST) or remove (DELETE) an axiom, say so, and draw the new ontology. */
async function changeAxiom(method, axiom) {
  const [done, verb] = method === "POST" ? ["Added", "add"] : ["Removed", "remove"];
  try {
    const answer = await sendJson(method, "/ontology/axioms", axiom);
    flash(`${done} ${axiom.subject} ${axiom.kind} ${axiom.object} (version ${answer.version})`);
    await loadOntology();
  } catch (error) {
    flash(`Could not ${verb} the axiom: ${error.message}`, true);
  }
}

function axiomRow(axiom) {
  const remove = () => changeAxiom("DELETE", axiom);
  return el(
    "tr",
    {},
    el("td", { class: "text" }, axiom.subject),
    el("td", {}, axiom.kind),
    el("td", { class: "text" }, axiom.object),
    el("td", {}, el("button", { type: "button", class: "remove-axiom", onClick: remove }, "Remove")),
  );
}

/** Fetch the trees and axioms and draw them. */
export async function loadOntology() {
  try {
    const tree = await json("GET", "/console/api/ontology-tree");
    byId("onto-version").textContent = String(tree.version);
    fill(byId("class-tree"), treeRows(tree.classes));
    fill(byId("property-tree"), treeRows(tree.properties));
    fill(byId("axiom-rows"), tree.axioms.map(axiomRow));
  } catch (error) {
    flash(`Could not load the ontology: ${error.message}`, true);
  }
}

async function addAxiom(event) {
  event.preventDefault();
  const axiom = {
    kind: byId("axiom-kind").value,
    subject: byId("axiom-subject").value.trim(),
    object: byId("axiom-object").value.trim(),
  };
  await changeAxiom("POST", axiom);
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
    flash(`Uploaded ${file.name} as ${type} (version ${answer.version})`);
    await loadOntology();
  } catch (error) {
    flash(`Could not upload ${file.name}: ${error.message}`, true);
  }
}

export function setUpOntology() {
  byId("axiom-form").addEventListener("submit", addAxiom);
  byId("upload-form").addEventListener("submit", upload);
  byId("onto-refresh").addEventListener("click", loadOntology);
}
