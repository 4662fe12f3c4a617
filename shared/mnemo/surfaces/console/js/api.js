// The REST API as the console uses it: the key lives in sessionStorage only (this tab, until it is
// closed or the user signs out); it is sent as the bearer and never put in a URL, a cookie or a log.

const KEY = "mnemo.apiKey";

export const session = {
  key: () => sessionStorage.getItem(KEY),
  signIn: (key) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** What went wrong in words, with what to do: never a raw JSON dump. */
export function explain(error) {
  if (typeof error === "string") return error;  // the console's own words (a form it refused to send)
  if (!(error instanceof ApiError)) return `Could not reach Mnemo (${error.message}). Check that the server is running and try again.`;
  const said = error.message;
  switch (error.status) {
    case 400: return `The request was refused: ${said}. Correct it and try again.`;
    case 401: return `This API key is not accepted (${said}). Sign out and sign in with a valid key.`;
    case 402: return `This tenant may not do that now: ${said}. Ask the operator about the tenant's plan.`;
    case 403: return `This key may not do that: ${said}. Ask an admin for a key with that permission.`;
    case 404: return `Not found: ${said}. It may have been erased, or belong to another user or tenant.`;
    case 409: return `Someone changed this at the same time, or it is being erased: ${said}. Reload and try again.`;
    case 413: return `Too large: ${said}. Send less at once.`;
    case 429: return `This tenant's quota is used up: ${said}. Wait for the month to reset (see Tenant → usage) or ask the operator to raise it.`;
    case 503: return `Mnemo is busy: ${said}. Try again in ${error.retryAfter || "a few"} seconds.`;
    default: return `Mnemo failed (${error.status}): ${said}. Try again; if it persists, tell the operator.`;
  }
}

/** Call the API; resolves to the parsed JSON body (or text), throws ApiError with the server's words. */
export async function api(method, path, { body, query, accept } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  const headers = { Authorization: `Bearer ${session.key() || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer" });
  const text = await response.text();
  let parsed = text;
  if ((response.headers.get("content-type") || "").includes("application/json")) {
    try { parsed = JSON.parse(text); } catch { parsed = text; }
  }
  if (!response.ok) {
    const error = parsed && parsed.error ? parsed.error : { code: "error", message: `HTTP ${response.status}` };
    throw new ApiError(response.status, error.code, error.message, response.headers.get("retry-after"));
  }
  return { body: parsed, headers: response.headers, status: response.status };
}

export const get = async (path, query) => (await api("GET", path, { query })).body;
export const post = async (path, body) => (await api("POST", path, { body })).body;
export const patch = async (path, body) => (await api("PATCH", path, { body })).body;
export const del = async (path, query) => (await api("DELETE", path, { query })).body;
