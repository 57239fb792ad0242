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

  /** The message with its position said once: "line 2, column 44: message". */
  located() {
    if (this.line === null) return this.message;
    const prefix = this.column === null ? `${this.line}: ` : `${this.line}:${this.column}: `;
    const text = this.message.startsWith(prefix) ? this.message.slice(prefix.length) : this.message;
    const where = this.column === null ? `line ${this.line}` : `line ${this.line}, column ${this.column}`;
    return `${where}: ${text}`;
  }

  /** Whether the server has no such route at all (an older server), not a missing object. */
  noRoute() {
    return this.status === 405 || (this.status === 404 && /^no route /.test(this.message));
  }
}

/** What an error says, its position once (for errors that are not the API's, the message). */
export function describeError(error) {
  return error instanceof ApiError ? error.located() : error.message;
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

/** A query string from an object (null and undefined values left out). */
export function query(params) {
  const found = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) found.set(key, String(value));
  }
  return found.toString();
}
