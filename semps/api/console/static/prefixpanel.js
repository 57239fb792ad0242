// The prefixes panel: every prefix the console knows (yours, the common ones, the
// ontology's), declaring and forgetting your own (kept in this browser, per user).

import { byId, el, fill, flash, grid } from "./dom.js";
import { declare, forget, known } from "./prefixes.js";

const listeners = [];

/** Call `listener()` after the user's prefixes change (panels redraw their names). */
export function onPrefixes(listener) {
  listeners.push(listener);
}

function changed() {
  drawPrefixes();
  for (const listener of listeners) listener();
}

/** The table of every prefix known, in #prefix-table (its rows in #prefix-rows). */
export function drawPrefixes() {
  const rows = known().map(({ prefix, namespace, source }) =>
    el(
      "tr",
      { "data-prefix": prefix },
      el("td", { class: "iri" }, `${prefix}:`),
      el("td", { class: "iri" }, namespace),
      el("td", { class: `source ${source}` }, source),
      el(
        "td",
        {},
        source === "yours"
          ? el("button", { type: "button", class: "forget", onClick: () => { forget(prefix); changed(); flash(`Forgot ${prefix}:`); } }, "Forget")
          : null,
      ),
    ),
  );
  fill(byId("prefix-table"), grid({ class: "grid" }, ["prefix", "namespace", "from", ""], rows, { id: "prefix-rows" }));
}

function add(event) {
  event.preventDefault();
  const name = byId("prefix-name").value.trim().replace(/:$/, "");
  try {
    declare(name, byId("prefix-namespace").value);
  } catch (error) {
    flash(`Not declared: ${error.message}`, true);
    return;
  }
  byId("prefix-name").value = "";
  byId("prefix-namespace").value = "";
  changed();
  flash(`Declared ${name}:`);
}

export function setUpPrefixes() {
  byId("prefix-form").addEventListener("submit", add);
}
