// One memory: content and metadata, namespace, version history, links, the facts it supports; edit,
// archive / reopen, and permanent erasure behind a typed confirmation that shows the receipt.
import { del, get, patch } from "./api.js";
import { button, el, facts, field, json, replace, when } from "./dom.js";
import { enrichment } from "./memories.js";

const CONFIRM = "erase";

export async function render(view, ctx, id) {
  const [memory, history] = await Promise.all([get(`/v1/memories/${encodeURIComponent(id)}?include_inactive=true`),
    get(`/v1/memories/${encodeURIComponent(id)}/history`)]);
  const reload = () => render(view, ctx, id);
  replace(view,
    el("p", {}, el("a", { href: "#/memories" }, "← All memories")),
    el("h2", {}, "Memory"),
    el("section", { "aria-labelledby": "content-title", className: "card" },
      el("h3", { id: "content-title" }, "Content"),
      el("blockquote", { className: "content" }, memory.content),
      facts([["Id", memory.id], ["Status", memory.status], ["Version", String(memory.version)],
        ["Category", memory.category], ["Entities", (memory.entities || []).join(", ") || "—"],
        ["Author", memory.author], ["Namespace", `user ${memory.user_id} · agent ${memory.agent_id || "—"} · group ${memory.group_id}`],
        ["Enrichment", enrichment(memory.enrichment)], ["Captured", when(memory.captured_at)], ["Updated", when(memory.updated_at)]]),
      el("h4", {}, "Metadata"), json(memory.metadata)),
    actions(ctx, memory, reload, view),
    el("section", { "aria-labelledby": "history-title" },
      el("h3", { id: "history-title" }, "Version history"),
      el("ol", { className: "history" }, ...history.map((line) => el("li", {},
        `v${line.version} ${line.action} by ${line.actor} at ${when(line.at)}`, line.detail ? el("div", { className: "detail" }, line.detail) : null)))),
    el("section", { "aria-labelledby": "links-title" },
      el("h3", { id: "links-title" }, "Links"),
      memory.links.length ? el("ul", {}, ...memory.links.map((link) => el("li", {},
        el("a", { href: `#/memories/${encodeURIComponent(link.id)}` }, link.id), ` (${link.reason}, weight ${Number(link.weight).toFixed(2)})`)))
        : el("p", {}, "No links yet (they appear once the memory is enriched).")),
    el("section", { "aria-labelledby": "facts-title" },
      el("h3", { id: "facts-title" }, "Facts it supports"),
      memory.facts.length ? el("ul", {}, ...memory.facts.map((fact) => el("li", { className: `fact ${fact.status}` },
        `${fact.subject} — ${fact.polarity === "negative" ? "not " : ""}${fact.predicate} — ${fact.object} `,
        `(from version ${fact.version}; ${fact.status}${fact.invalidated_by ? `, superseded by fact ${fact.invalidated_by}` : ""}) `,
        el("a", { href: `#/entities/${encodeURIComponent(`name:${fact.subject}`)}` }, `timeline of ${fact.subject}`))))
        : el("p", {}, "No facts extracted from this memory.")));
}

function actions(ctx, memory, reload, view) {
  const section = el("section", { "aria-labelledby": "actions-title", className: "card" }, el("h3", { id: "actions-title" }, "Change it"));
  if (ctx.can("memory:write")) section.append(editForm(ctx, memory, reload));
  if (ctx.can("memory:delete")) {
    const archived = memory.status === "archived";
    section.append(el("div", { className: "row" }, button(archived ? "Reopen" : "Archive", async () => {
      try {
        if (archived) await patch(`/v1/memories/${encodeURIComponent(memory.id)}`, { status: "open" });
        else await del(`/v1/memories/${encodeURIComponent(memory.id)}`);
        await reload();
        ctx.notify(archived ? "Reopened." : "Archived. Reopen it to undo.");
      } catch (error) { ctx.fail(error); }
    })), eraseForm(ctx, memory, view));
  }
  if (section.childElementCount === 1) section.append(el("p", {}, "This key may only read memories."));
  return section;
}

function editForm(ctx, memory, reload) {
  const content = el("textarea", { name: "content", rows: 4, value: memory.content });
  const metadata = el("textarea", { name: "metadata", rows: 4, value: JSON.stringify(memory.metadata, null, 2) });
  const form = el("form", { "aria-label": "Edit the memory" }, field("Text", content), field("Metadata (JSON object)", metadata),
    el("button", { type: "submit" }, "Save changes"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    if (content.value !== memory.content) body.content = content.value;
    try {
      const parsed = JSON.parse(metadata.value || "{}");
      if (JSON.stringify(parsed) !== JSON.stringify(memory.metadata)) body.metadata = parsed;
    } catch {
      ctx.fail("The metadata is not valid JSON: fix it and save again.");
      return;
    }
    if (!Object.keys(body).length) { ctx.notify("Nothing changed."); return; }
    try {
      const updated = await patch(`/v1/memories/${encodeURIComponent(memory.id)}`, body);
      await reload();
      ctx.notify(`Saved as version ${updated.version}: ${(updated.applied || []).join("; ") || "no change"}.`);
    } catch (error) { ctx.fail(error); }
  });
  return form;
}

function eraseForm(ctx, memory, view) {
  const typed = el("input", { name: "confirm", autocomplete: "off" });
  const form = el("form", { className: "danger", "aria-label": "Erase the memory permanently" },
    el("h4", {}, "Erase permanently"),
    el("p", {}, "Erasure deletes the memory, its history, links, facts and index copies for good. It cannot be undone."),
    field(`Type “${CONFIRM}” to confirm`, typed), el("button", { type: "submit" }, "Erase permanently"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (typed.value.trim() !== CONFIRM) { ctx.fail(`Nothing was erased: type “${CONFIRM}” in the box to confirm.`); return; }
    try {
      const receipt = await del(`/v1/memories/${encodeURIComponent(memory.id)}`, { hard: true });
      replace(view, el("h2", {}, "Erased"), el("p", {}, "The memory was erased. This receipt lists ids and counts, never text."),
        facts([["Kind", receipt.kind], ["Status", receipt.status], ["Memories", receipt.memory_ids.join(", ")],
          ...Object.entries(receipt.counts).map(([name, count]) => [name, String(count)]),
          ["Finished", when(receipt.finished_at)]]),
        el("p", {}, el("a", { href: "#/memories" }, "Back to memories")));
      ctx.notify("Erased permanently.");
    } catch (error) { ctx.fail(error); }
  });
  return form;
}
