// The publish form: a body and its media type, sent to POST /events.

import { describeError, json } from "./api.js";
import { bodyButtons } from "./bodyform.js";
import { byId, el, fill } from "./dom.js";

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

export function setUpPublish() {
  bodyButtons("publish", "Publish", "body", "bodies");
  byId("publish-form").addEventListener("submit", publish);
}
