// Import and export. An import file (Mnemo's export, r3's array or mem0's {"results": [...]}) is split
// here into requests under the API's body limit and its synchronous item limit, sent one after the
// other behind one progress bar; an export downloads a user's pages as one Mnemo export file.
import { api, get } from "./api.js";
import { el, field, replace } from "./dom.js";

export const BODY_LIMIT = 256 * 1024;  // the REST body cap (surfaces/gate.py)
const CHUNK_BYTES = 200 * 1024;  // room for the envelope and JSON escaping differences
const CHUNK_ITEMS = 200;  // the synchronous import limit (services/jobs/service.py): every chunk answers at once
const encoder = new TextEncoder();

/** The items of a file, memories first, as the API's `items_of` reads them. */
export function itemsOf(data) {
  if (Array.isArray(data)) return data;
  if (data && typeof data === "object") {
    const recorded = Array.isArray(data.recorded_facts) ? data.recorded_facts.map((fact) => ({ recorded_fact: fact })) : [];
    for (const key of ["results", "memories"]) if (Array.isArray(data[key])) return [...data[key], ...recorded];
    if (recorded.length) return recorded;
  }
  throw new Error("the file must hold a JSON array of items, or an object with “results” (mem0) or “memories” (a Mnemo export)");
}

/** Consecutive chunks of at most CHUNK_ITEMS items and CHUNK_BYTES of JSON each. */
export function chunksOf(items) {
  const chunks = [];
  let current = [], size = 0;
  items.forEach((item, index) => {
    const length = encoder.encode(JSON.stringify(item)).length + 1;
    if (length > CHUNK_BYTES) throw new Error(`item ${index} is ${length} bytes of JSON, more than one request may carry (${CHUNK_BYTES})`);
    if (current.length >= CHUNK_ITEMS || size + length > CHUNK_BYTES) { chunks.push(current); current = []; size = 0; }
    current.push(item);
    size += length;
  });
  if (current.length) chunks.push(current);
  return chunks;
}

export async function render(view, ctx) {
  const sections = [el("h2", {}, "Import and export")];
  if (ctx.can("memory:write")) sections.push(importForm(ctx));
  if (ctx.can("memory:read")) sections.push(exportForm(ctx));
  if (sections.length === 1) sections.push(el("p", {}, "This key may neither import nor export."));
  replace(view, ...sections);
}

function importForm(ctx) {
  const file = el("input", { type: "file", name: "file", accept: ".json,application/json", required: true });
  const user = el("input", { name: "user_id", placeholder: ctx.whoami.user_id || "default" });
  const skip = el("input", { type: "checkbox", id: "skip-duplicates", name: "skip_duplicates", checked: ctx.can("memory:read") });
  const bar = el("progress", { max: 1, value: 0, "aria-label": "Import progress" });
  const said = el("p", { "aria-live": "polite" });
  const report = el("div");
  const form = el("form", { className: "card", "aria-labelledby": "import-title" },
    el("h3", { id: "import-title" }, "Import a JSON file"),
    field("File (Mnemo export, r3 array or mem0 export)", file), field("Into user", user),
    el("div", { className: "field inline" }, skip, el("label", { htmlFor: "skip-duplicates" }, "Skip items the user already has")),
    el("button", { type: "submit" }, "Import"), el("div", { className: "progress" }, bar, said), report);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let chunks, total;
    try {
      const items = itemsOf(JSON.parse(await file.files[0].text()));
      chunks = chunksOf(items);
      total = items.length;
    } catch (error) {
      ctx.fail(`The file cannot be imported: ${error.message}.`);
      return;
    }
    const counts = { imported: 0, facts: 0, skipped: 0, failed: 0 }, reasons = [];
    bar.max = total; bar.value = 0;
    let offset = 0;
    for (const [index, chunk] of chunks.entries()) {
      said.textContent = `Sending part ${index + 1} of ${chunks.length} (${offset} of ${total} items done)…`;
      try {
        const body = { data: chunk, user_id: user.value.trim() || undefined, skip_duplicates: skip.checked };
        const answer = (await api("POST", "/v1/import", { body })).body;
        counts.imported += answer.imported.length; counts.facts += (answer.facts_imported || []).length;
        counts.skipped += answer.skipped.length; counts.failed += answer.failed.length;
        for (const line of [...answer.skipped, ...answer.failed].slice(0, 20 - reasons.length)) reasons.push(`item ${offset + line.index}: ${line.reason}`);
      } catch (error) {
        said.textContent = `Stopped at item ${offset} of ${total}: what was sent before stays imported; importing the file again skips it.`;
        ctx.fail(error);
        return;
      }
      offset += chunk.length;
      bar.value = offset;
    }
    said.textContent = `Done: ${total} items in ${chunks.length} requests.`;
    replace(report, el("p", {}, `${counts.imported} imported, ${counts.facts} facts recorded again, ${counts.skipped} skipped, ${counts.failed} failed.`),
      reasons.length ? el("ul", { "aria-label": "First reasons" }, ...reasons.map((r) => el("li", {}, r))) : null);
    ctx.notify("Import finished.");
  });
  return form;
}

function exportForm(ctx) {
  const user = el("input", { name: "user_id", placeholder: ctx.whoami.user_id || "default" });
  const said = el("p", { "aria-live": "polite" });
  const form = el("form", { className: "card", "aria-labelledby": "export-title" },
    el("h3", { id: "export-title" }, "Export a user's memories"), field("User", user),
    el("button", { type: "submit" }, "Download export"), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const all = { memories: [], recorded_facts: [] };
    let cursor;
    try {
      do {  // one page (100) per request; the file is assembled here, the page is never rendered
        const page = await get("/v1/export", { user_id: user.value.trim() || undefined, limit: 100, cursor });
        all.memories.push(...page.memories);
        all.recorded_facts.push(...page.recorded_facts);
        said.textContent = `${all.memories.length} memories read…`;
        cursor = page.next_cursor;
      } while (cursor);
    } catch (error) { ctx.fail(error); return; }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([JSON.stringify(all, null, 2)], { type: "application/json" }));
    link.download = `mnemo-export-${user.value.trim() || ctx.whoami.user_id || "default"}.json`;
    link.click();
    URL.revokeObjectURL(link.href);
    said.textContent = `Exported ${all.memories.length} memories and ${all.recorded_facts.length} recorded facts.`;
  });
  return form;
}
