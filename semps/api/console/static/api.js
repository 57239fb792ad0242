// The HTTP API with the user's bearer token (kept in sessionStorage: this tab only).

const KEY = "semps.token";

export function token() {
  return sessionStorage.getItem(KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

/** An error answer of the API: its status, error name and message (and line/column). */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.error = body.error || "error";
    this.line = body.line ?? null;
    this.column = body.column ?? null;
  }
}

/** fetch() with the token; `body` is sent as is with `type` as its Content-Type. */
export async function call(method, path, { body, type, accept, signal } = {}) {
  const headers = { Authorization: `Bearer ${token() || ""}` };
  if (type) headers["Content-Type"] = type;
  if (accept) headers.Accept = accept;
  const response = await fetch(path, { method, headers, body, signal, cache: "no-store" });
  if (!response.ok) {
    let doc = {};
    try {
      doc = await response.json();
    } catch {
      doc = { detail: `${response.status} ${response.statusText}` };
    }
    throw new ApiError(response.status, doc);
  }
  return response;
}

/** A JSON answer (null for 204). */
export async function json(method, path, options = {}) {
  const response = await call(method, path, options);
  return response.status === 204 ? null : response.json();
}

/** A JSON request body. */
export function sendJson(method, path, doc) {
  return json(method, path, { body: JSON.stringify(doc), type: "application/json" });
}
