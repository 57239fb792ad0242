// The publish form: a body and its media type, sent to POST /events.

import { describeError, json } from "./api.js";
import { byId, el, fill, flash } from "./dom.js";
import { declareMissing } from "./prefixes.js";

async function publish(event) {
  event.preventDefault();
  const type = byId("publish-type").value;
  const result = byId("publish-result");
  try {
    const answer = await json("POST", "/events", { body: byId("publish-body").value, type });
    fill(
      result,
      `Published ${answer.id}: matched ${answer.matched} subscription(s) `,
      el("a", { href: `#event/${encodeURIComponent(answer.id)}`, class: "event-link" }, "(view the event)"),
    );
    result.classList.remove("error");
  } catch (error) {
    result.textContent = `Not published: ${describeError(error)}`;
    result.classList.add("error");
  }
}

/** Add @prefix lines (Turtle) for the known prefixes the body uses but does not declare. */
function declarePrefixes() {
  const area = byId("publish-body");
  if (byId("publish-type").value !== "text/turtle") {
    flash("Prefix lines are for Turtle bodies.", true);
    return;
  }
  declareMissing(area, "turtle", "body");
}

export function setUpPublish() {
  byId("publish-form").addEventListener("submit", publish);
  byId("publish-prefixes").addEventListener("click", declarePrefixes);
}
