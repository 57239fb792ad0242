// The publish form: a body and its media type, sent to POST /events.

import { json } from "./api.js";
import { byId } from "./dom.js";

async function publish(event) {
  event.preventDefault();
  const type = byId("publish-type").value;
  const result = byId("publish-result");
  try {
    const answer = await json("POST", "/events", { body: byId("publish-body").value, type });
    result.textContent = `Published ${answer.id}: matched ${answer.matched} subscription(s)`;
    result.classList.remove("error");
  } catch (error) {
    const where = error.line ? ` (line ${error.line}, column ${error.column})` : "";
    result.textContent = `Not published: ${error.message}${where}`;
    result.classList.add("error");
  }
}

export function setUpPublish() {
  byId("publish-form").addEventListener("submit", publish);
}
