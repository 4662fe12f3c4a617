// Memories: browse newest first, or search (explain shows each score component); filters for user,
// agent, group, status and author; one page of 50 at a time, by cursor.
import { get, post } from "./api.js";
import { button, el, field, replace, select, when } from "./dom.js";

const PAGE = 50;
// The filters and position live here (not in the URL): a hash holds only the screen.
const state = { filters: { user_id: "", agent_id: "", group_id: "", status: "open", author: "all", query: "", mode: "full" }, cursors: [] };

export function enrichment(view) {
  if (!view) return "—";
  if (view.state === "failed") return `failed: ${view.error || "no reason given"}`;
  return view.state;
}

export function memoryLink(memory) {
  return el("a", { href: `#/memories/${encodeURIComponent(memory.id)}` }, memory.text || memory.content || memory.id);
}

function row(memory, explained) {
  const cells = [
    el("td", {}, memoryLink(memory)),
    el("td", {}, memory.category || "—"),
    el("td", {}, (memory.entities || []).join(", ") || "—"),
    el("td", {}, enrichment(memory.enrichment)),
    el("td", {}, when(memory.captured_at)),
  ];
  if (explained) {
    const parts = Object.entries(memory.explain || {}).map(([name, value]) => `${name} ${Number(value).toFixed(3)}`);
    cells.push(el("td", {}, memory.score === undefined ? "—" : Number(memory.score).toFixed(3),
      parts.length ? el("small", { className: "explain" }, parts.join(" · ")) : null));
  }
  return el("tr", {}, ...cells);
}

function table(results, explained) {
  const heads = ["Memory", "Category", "Entities", "Enrichment", "Captured"];
  if (explained) heads.push("Score (components)");
  return el("table", {},
    el("caption", {}, explained ? "Search results, most relevant first" : "Memories, newest first"),
    el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...results.map((m) => row(m, explained))));
}

function filtersForm(ctx, onSubmit) {
  const f = state.filters;
  const query = el("input", { type: "search", name: "query", value: f.query });
  const mode = select("mode", [["full", "full (semantic + keyword)"], ["fast", "fast"]], f.mode);
  const user = el("input", { name: "user_id", value: f.user_id, placeholder: ctx.whoami.user_id || "default" });
  const agent = el("input", { name: "agent_id", value: f.agent_id });
  const group = el("input", { name: "group_id", value: f.group_id });
  const status = select("status", [["open", "open"], ["completed", "completed"], ["archived", "archived"], ["any", "any"]], f.status);
  const author = select("author", [["all", "all"], ["user", "user"], ["agent", "agent"]], f.author);
  const form = el("form", { className: "filters", role: "search", "aria-label": "Search and filter memories" },
    field("Search", query, "Leave empty to browse newest first."), field("Mode", mode),
    field("User", user, ctx.can("admin") ? "A user id, or * for every user (admin)." : "A user id."),
    field("Agent", agent), field("Group", group), field("Status (browse)", status), field("Author", author),
    el("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    Object.assign(state.filters, { query: query.value.trim(), mode: mode.value, user_id: user.value.trim(),
      agent_id: agent.value.trim(), group_id: group.value.trim(), status: status.value, author: author.value });
    state.cursors = [];
    onSubmit();
  });
  return form;
}

export async function render(view, ctx) {
  const results = el("section", { "aria-labelledby": "results-title" });
  replace(view, el("h2", {}, "Memories"), filtersForm(ctx, () => load(ctx, results)), results);
  await load(ctx, results);
}

async function load(ctx, results) {
  const f = state.filters;
  const scope = { user_id: f.user_id || undefined, agent_id: f.agent_id || undefined, group_id: f.group_id || undefined, author: f.author };
  replace(results, el("h3", { id: "results-title" }, "Results"), el("p", {}, "Loading…"));
  try {
    if (f.query) {
      const found = await post("/v1/memories/search", { query: f.query, mode: f.mode, explain: true, top_k: PAGE, ...scope });
      replace(results, el("h3", { id: "results-title" }, `${found.results.length} found for “${f.query}”`),
        found.results.length ? table(found.results, true) : el("p", {}, "No memory matches. Try other words or fewer filters."));
      return;
    }
    const statuses = f.status === "any" ? ["open", "completed", "archived"] : [f.status];
    const cursor = state.cursors[state.cursors.length - 1] || {};
    const page = await get("/v1/memories", { ...scope, status: statuses, limit: PAGE, ...cursor });
    const controls = el("div", { className: "pager" });
    if (state.cursors.length) controls.append(button("First page", () => { state.cursors = []; load(ctx, results); }));
    if (page.next_cursor) controls.append(button("Next page", () => { state.cursors.push(page.next_cursor); load(ctx, results); }));
    const where = Object.entries(page.scope || {}).map(([k, v]) => `${k} ${v}`).join(", ");
    replace(results, el("h3", { id: "results-title" }, `Page ${state.cursors.length + 1}: ${page.results.length} memories`),
      el("p", { className: "hint" }, `Scope: ${where}`),
      page.results.length ? table(page.results, false) : el("p", {}, "No memories here yet."), controls);
  } catch (error) {
    replace(results, el("h3", { id: "results-title" }, "Results"), el("p", {}, "Could not load memories."));
    ctx.fail(error);
  }
}
