// The top of a panel that browses a store (the ontology, the knowledge graph): the page's
// store-top template, put in each such panel, and drawn from the store's version and sizes.

import { byId, fill } from "./dom.js";

/**
 * Put the store-top template at the top of the panel whose browser is `${key}-browse`: the
 * heading (`title`, then `${key}-version`, `${key}-sizes` and the `${key}-refresh` button),
 * the status line, `${key}-empty`, and first in the browser the search box `${key}-search`
 * (its placeholder `search`, its label `label`).
 */
export function storeTop(key, { title, search, label }) {
  const top = byId("store-top").content.cloneNode(true);
  for (const node of top.querySelectorAll("[data-part]")) {
    node.id = `${key}-${node.dataset.part}`;
    node.removeAttribute("data-part");
  }
  top.querySelector("h2").prepend(`${title} `);
  const box = top.querySelector("input");
  box.placeholder = search;
  box.setAttribute("aria-label", label);
  const browse = byId(`${key}-browse`);
  browse.prepend(box);
  browse.before(top);
}

/** Show the store's `version` and `sizes` (text); `emptiness`: what to say instead of the
 * browser when the store is empty (null: it is not). */
export function drawStore(key, version, sizes, emptiness) {
  byId(`${key}-version`).textContent = String(version);
  byId(`${key}-sizes`).textContent = sizes;
  fill(byId(`${key}-empty`), emptiness);
  byId(`${key}-browse`).hidden = emptiness !== null;
}
