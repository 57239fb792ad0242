// The buttons under the RDF body of a form (publish an event, explain one pasted in): add the
// @prefix lines a Turtle body lacks, and send the form.

import { byId, el, flash } from "./dom.js";
import { declareMissing } from "./prefixes.js";

/**
 * Put after the textarea `${key}-body` (its media type chosen in `${key}-type`) a row with
 * "Add @prefix lines" (`${key}-prefixes`: declares the known prefixes a Turtle body uses but
 * does not declare) and the submit button `submit`; `what` and `whats`: the body, once and
 * many, as the messages name it.
 */
export function bodyButtons(key, submit, what, whats) {
  const area = byId(`${key}-body`);
  const declarePrefixes = () => {
    if (byId(`${key}-type`).value !== "text/turtle") {
      flash(`Prefix lines are for Turtle ${whats}.`, true);
      return;
    }
    declareMissing(area, "turtle", what);
  };
  area.after(
    el(
      "div",
      { class: "row" },
      el("button", { id: `${key}-prefixes`, type: "button", onClick: declarePrefixes }, "Add @prefix lines"),
      el("button", { type: "submit" }, submit),
    ),
  );
}
