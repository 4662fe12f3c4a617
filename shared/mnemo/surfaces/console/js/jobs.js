// Jobs: the tenant's jobs newest first, 50 a page (GET /v1/jobs: import and deduplication jobs with
// memory:read, user erasures with admin), and one job followed until it ends.
import { get } from "./api.js";
import { button, el, facts, replace, when } from "./dom.js";

const PAGE = 50;
const FOLLOW_MS = 1500;

function progressOf(job) {
  if (job.kind === "user") return el("span", {}, `${job.counts.memories} memories erased`);
  const { done, total } = job.progress;
  if (!total) return el("span", {}, `${done} done`);
  return el("span", {}, el("progress", { max: total, value: done, "aria-label": `Job ${job.job_id} progress` }), ` ${done} / ${total}`);
}

function label(job) {
  return job.kind === "user" ? "user erasure" : job.kind.replace("_", " ");
}

export async function render(view, ctx, id) {
  if (id !== undefined) return follow(view, ctx, id);
  const cursors = [];
  const list = el("section", { "aria-labelledby": "jobs-title" });
  replace(view, el("h2", {}, "Jobs"), list);
  const load = async () => {
    const page = await get("/v1/jobs", { limit: PAGE, cursor: cursors[cursors.length - 1] });
    const pager = el("div", { className: "pager" });
    if (cursors.length) pager.append(button("First page", () => { cursors.length = 0; load().catch(ctx.fail); }));
    if (page.next_cursor) pager.append(button("Next page", () => { cursors.push(page.next_cursor); load().catch(ctx.fail); }));
    replace(list, el("h3", { id: "jobs-title" }, ctx.can("admin") ? "Imports, deduplications and erasures" : "Imports and deduplications"),
      page.results.length ? el("table", {}, el("caption", {}, "Newest first"),
        el("thead", {}, el("tr", {}, ...["Job", "Kind", "Status", "User", "Progress", "Requested", "Error"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, ...page.results.map((job) => el("tr", {},
          el("td", {}, el("a", { href: `#/jobs/${encodeURIComponent(job.job_id)}` }, job.job_id.slice(0, 8))),
          el("td", {}, label(job)), el("td", {}, job.status), el("td", {}, job.user_id || "—"), el("td", {}, progressOf(job)),
          el("td", {}, when(job.requested_at || job.started_at)), el("td", {}, job.error || "—")))))
        : el("p", {}, "No jobs yet. Imports of more than 200 items and user erasures run as jobs."), pager);
  };
  await load();
}

async function follow(view, ctx, id) {
  const route = window.location.hash;
  const job = await get(`/v1/jobs/${encodeURIComponent(id)}`);
  const summary = job.kind === "user"
    ? facts(Object.entries(job.counts).map(([name, count]) => [name, String(count)]))
    : facts([["Imported", String(job.summary.imported)], ["Skipped", String(job.summary.skipped)], ["Failed", String(job.summary.failed)],
      ["Archived (deduplicate)", String(job.summary.archived)]]);
  const reasons = job.kind === "user" ? [] : job.summary.reasons;
  replace(view, el("p", {}, el("a", { href: "#/jobs" }, "← All jobs")), el("h2", {}, `Job ${job.job_id}`),
    facts([["Kind", label(job)], ["Status", job.status], ["User", job.user_id || "—"], ["Progress", progressOf(job)],
      ["Started", when(job.started_at)], ["Finished", when(job.finished_at)], ["Error", job.error || "—"]]),
    el("h3", {}, "Summary"), summary,
    reasons.length ? el("section", { "aria-labelledby": "reasons-title" }, el("h3", { id: "reasons-title" }, "First reasons"),
      el("ul", {}, ...reasons.map((r) => el("li", {}, r)))) : null);
  if (job.status === "queued" || job.status === "running") {
    setTimeout(() => { if (window.location.hash === route) follow(view, ctx, id).catch(ctx.fail); }, FOLLOW_MS);
  }
}
