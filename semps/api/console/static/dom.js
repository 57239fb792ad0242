// Building DOM nodes safely: text only ever becomes a Text node (never HTML), and
// attributes are set one by one, so hostile IRIs, literals and names render as text.

/**
 * A new element. `props` holds attributes ("class", "title", "data-x"...) and event
 * handlers ("onClick": a function, added with addEventListener); children are strings
 * (inserted as text), nodes, or null (skipped).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (!key.startsWith("on")) {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** The element with this id (throws if the page lacks it: a bug, not user input). */
export function byId(id) {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`no element #${id}`);
  return node;
}

/** Show a message in the flash line (bad = an error). */
export function flash(message, bad = false) {
  const node = byId("flash");
  node.textContent = message;
  node.classList.toggle("bad", bad);
}
