// Prefixes: the user's own (kept in this browser's localStorage, per user), the common ones,
// and the ontology's (suggested by the server from its namespaces). Every form takes CURIEs
// (brick:AHU) or IRIs (<http://...> or http://...); every display shows CURIEs, the full IRI
// in the tooltip.

import { flash } from "./dom.js";

/** Common vocabularies, as their communities write them. */
export const COMMON = Object.freeze({
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  rdfs: "http://www.w3.org/2000/01/rdf-schema#",
  owl: "http://www.w3.org/2002/07/owl#",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  skos: "http://www.w3.org/2004/02/skos/core#",
  sh: "http://www.w3.org/ns/shacl#",
  dcterms: "http://purl.org/dc/terms/",
  prov: "http://www.w3.org/ns/prov#",
  sosa: "http://www.w3.org/ns/sosa/",
  ssn: "http://www.w3.org/ns/ssn/",
  time: "http://www.w3.org/2006/time#",
  foaf: "http://xmlns.com/foaf/0.1/",
  schema: "http://schema.org/",
  vcard: "http://www.w3.org/2006/vcard/ns#",
  geo: "http://www.opengis.net/ont/geosparql#",
  brick: "https://brickschema.org/schema/Brick#",
  tag: "https://brickschema.org/schema/BrickTag#",
  ref: "https://brickschema.org/schema/Brick/ref#",
  rec: "https://w3id.org/rec#",
  qudt: "http://qudt.org/schema/qudt/",
  unit: "http://qudt.org/vocab/unit/",
  quantitykind: "http://qudt.org/vocab/quantitykind/",
  bacnet: "http://data.ashrae.org/bacnet/2020#",
  s223: "http://data.ashrae.org/standard223#",
});

/** A prefix name as SPARQL and Turtle allow it (PN_PREFIX, ASCII), or empty. */
const PREFIX_NAME = /^([A-Za-z]([\w.-]*[\w-])?)?$/;
/** A CURIE: prefix, colon, local part (no spaces, no angle brackets). */
const CURIE = /^([A-Za-z][\w.-]*)?:([^\s<>"{}|\\^`]*)$/;
/** An absolute IRI's scheme: `http://...`, `urn:...` and the like. */
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:(\/\/|[^\s<>"{}|\\^`])/;
const SCHEMES_WITHOUT_SLASHES = new Set(["urn", "tag", "mailto", "data", "did"]);
/** A local part that can be written after a prefix (no /, #, ?, spaces; no final dot). */
const LOCAL = /^[\w-]([\w.-]*[\w-])?$/u;

const state = { user: null, own: {}, ontology: {} };

function storageKey(user) {
  return `semps.prefixes.${user}`;
}

/** Read the user's prefixes from localStorage (a bad entry is dropped, not fatal). */
export function useUser(user) {
  state.user = user;
  state.own = {};
  try {
    const saved = JSON.parse(localStorage.getItem(storageKey(user)) || "{}");
    for (const [name, ns] of Object.entries(saved)) {
      if (PREFIX_NAME.test(name) && typeof ns === "string" && ABSOLUTE.test(ns)) state.own[name] = ns;
    }
  } catch {
    state.own = {};
  }
}

function save() {
  if (state.user !== null) localStorage.setItem(storageKey(state.user), JSON.stringify(state.own));
}

/** Declare (or change) one of the user's prefixes; throws with a message on a bad one. */
export function declare(name, namespace) {
  const ns = namespace.trim().replace(/^<(.*)>$/, "$1");
  if (!PREFIX_NAME.test(name)) {
    throw new Error(`not a prefix name: '${name}' (a letter, then letters, digits, _ - or .)`);
  }
  if (!ABSOLUTE.test(ns)) throw new Error(`not an absolute IRI: '${ns}'`);
  state.own[name] = ns;
  save();
}

export function forget(name) {
  delete state.own[name];
  save();
}

/** The ontology's namespaces as the server suggests them ([{namespace, prefix}]). */
export function setOntologyPrefixes(namespaces) {
  state.ontology = {};
  const taken = new Set([...Object.keys(COMMON), ...Object.keys(state.own)]);
  const known = new Set([...Object.values(COMMON), ...Object.values(state.own)]);
  for (const { namespace, prefix } of namespaces) {
    if (known.has(namespace) || typeof prefix !== "string" || !PREFIX_NAME.test(prefix) || prefix === "") continue;
    let name = prefix;
    for (let n = 2; taken.has(name); n += 1) name = `${prefix}${n}`;
    taken.add(name);
    state.ontology[name] = namespace;
  }
}

/** Every prefix known now: the user's win over the common ones, which win over the
 * ontology's. [{prefix, namespace, source}], sorted by prefix. */
export function known() {
  const rows = new Map();
  for (const [source, table] of [["ontology", state.ontology], ["common", COMMON], ["yours", state.own]]) {
    for (const [prefix, namespace] of Object.entries(table)) rows.set(prefix, { prefix, namespace, source });
  }
  return [...rows.values()].sort((a, b) => a.prefix.localeCompare(b.prefix));
}

function table() {
  return { ...state.ontology, ...COMMON, ...state.own };
}

/** The namespace of a prefix, or undefined. */
export function namespaceOf(prefix) {
  return table()[prefix];
}

/**
 * The IRI a user typed: `<iri>`, `prefix:local` with a known prefix, or an absolute IRI.
 * Throws an Error saying what is wrong (an unknown prefix, not an IRI) otherwise.
 */
export function expand(text) {
  const value = text.trim();
  if (value === "") throw new Error("give a CURIE (brick:AHU) or an IRI");
  const bracketed = value.match(/^<([^<>]*)>$/);
  if (bracketed) {
    if (!ABSOLUTE.test(bracketed[1])) throw new Error(`not an absolute IRI: <${bracketed[1]}>`);
    return bracketed[1];
  }
  const curie = value.match(CURIE);
  if (curie) {
    const prefix = curie[1] ?? "";
    const ns = namespaceOf(prefix);
    if (ns !== undefined) return ns + curie[2];
    const scheme = prefix.toLowerCase();
    if (curie[2].startsWith("//") || SCHEMES_WITHOUT_SLASHES.has(scheme)) return value;
    throw new Error(
      `unknown prefix '${prefix}:' in '${value}': declare it under Prefixes, ` +
        "or write the full IRI in angle brackets",
    );
  }
  if (ABSOLUTE.test(value) && !/[\s<>"{}|\\^`]/.test(value)) return value;
  throw new Error(`not a CURIE or an IRI: '${value}' (write prefix:Name or <http://...>)`);
}

/** Like expand(), but returns null instead of throwing. */
export function tryExpand(text) {
  try {
    return expand(text);
  } catch {
    return null;
  }
}

/** The shortest CURIE for an IRI under the known prefixes, or the IRI itself. */
export function compact(iri) {
  let best = null;
  for (const [prefix, ns] of Object.entries(table())) {
    if (!iri.startsWith(ns) || (best && best.ns.length >= ns.length)) continue;
    const local = iri.slice(ns.length);
    if (local === "" || LOCAL.test(local)) best = { prefix, ns, local };
  }
  return best ? `${best.prefix}:${best.local}` : iri;
}

/** An N-Triples term (as notifications carry them) written with CURIEs:
 * `<iri>` -> `p:x`, `"v"^^<dt>` -> `"v"^^xsd:decimal`; other terms as they are. */
export function compactTerm(term) {
  const iri = term.match(/^<([^<>]*)>$/);
  if (iri) {
    const short = compact(iri[1]);
    return short === iri[1] ? term : short;
  }
  const typed = term.match(/^(".*")\^\^<([^<>]*)>$/s);
  if (typed) {
    const short = compact(typed[2]);
    return short === typed[2] ? term : `${typed[1]}^^${short}`;
  }
  return term;
}

/** A text's `<iri>`s written as CURIEs where a known prefix fits (an explanation's text). */
export function compactText(text) {
  return text.replace(/<([^<>\s"]+)>/g, (whole, iri) => {
    const short = compact(iri);
    return short === iri ? whole : short;
  });
}

/** The prefixes a text uses (`p:x` outside <...> and "..."), known but not declared in it,
 * as declaration lines in `syntax` ("sparql": PREFIX p: <ns>, "turtle": @prefix p: <ns> .). */
export function missingDeclarations(text, syntax) {
  const declared = new Set();
  for (const m of text.matchAll(/(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:/gi)) declared.add(m[1] ?? "");
  const bare = text.replace(/<[^<>\s]*>/g, " ").replace(/"(?:[^"\\\n]|\\.)*"/g, " ").replace(/#[^\n]*/g, " ");
  const used = new Set();
  for (const m of bare.matchAll(/(?:^|[\s;,.(){}[\]^/|!=<>+*])([A-Za-z][\w-]*(?:\.[\w-]+)*):[\w-]/g)) used.add(m[1]);
  const lines = [];
  for (const prefix of [...used].sort()) {
    const ns = namespaceOf(prefix);
    if (declared.has(prefix) || ns === undefined) continue;
    lines.push(syntax === "turtle" ? `@prefix ${prefix}: <${ns}> .` : `PREFIX ${prefix}: <${ns}>`);
  }
  return lines;
}

/** Put the declarations `missingDeclarations` finds at the top of `area` (a textarea) and
 * say which (`what`: the area's text, as the message names it); true when it added any. */
export function declareMissing(area, syntax, what) {
  const lines = missingDeclarations(area.value, syntax);
  if (lines.length === 0) {
    flash(`Every prefix the ${what} uses is declared (or unknown: see Prefixes).`);
    return false;
  }
  area.value = `${lines.join("\n")}\n${area.value}`;
  flash(`Declared ${lines.map((l) => l.split(/\s+/)[1]).join(" ")}`);
  return true;
}
