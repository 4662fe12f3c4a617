// Facts and entities: find entities through a fact search, then an entity's current facts, its full
// timeline (valid from / until, what superseded each fact, its source memory), an as_of control, its
// neighbourhood as a graph, and the path to another entity. One page of edges (at most 100) at a time.
import { get, post } from "./api.js";
import { el, field, replace, when } from "./dom.js";
import { neighbourhood } from "./graph.js";

const TIMELINE = 100;  // the neighbours route's page (its maximum)

export async function render(view, ctx, id) {
  if (id === undefined) return searchScreen(view, ctx);
  if (id.startsWith("name:")) {
    const uuid = await resolve(id.slice(5));
    if (!uuid) {
      replace(view, el("h2", {}, "No such entity"), el("p", {}, `No fact names “${id.slice(5)}”. Search for it below.`));
      return searchScreen(view, ctx, id.slice(5), true);
    }
    return entityScreen(view, ctx, uuid);
  }
  return entityScreen(view, ctx, id);
}

/** The uuid of the entity a name best matches (exact name first), through the fact search. */
async function resolve(name) {
  const found = await post("/v1/search", { query: name, limit: 20 });
  const nodes = found.edges.flatMap((edge) => [edge.source, edge.target]);
  const exact = nodes.find((node) => node.name.toLowerCase() === name.toLowerCase());
  return (exact || nodes[0] || {}).uuid;
}

function sourceLinks(episodes) {
  return episodes.map((episode) => episode === "recorded" ? "recorded"
    : el("a", { href: `#/memories/${encodeURIComponent(episode)}` }, "source memory"));
}

function timelineTable(caption, edges) {
  return el("table", {}, el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ...["Fact", "Status", "Valid from", "Valid until", "Superseded by", "Source"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...edges.map((edge) => el("tr", {},
      el("td", {}, edge.fact), el("td", {}, edge.status), el("td", {}, when(edge.valid_at)), el("td", {}, edge.invalid_at ? when(edge.invalid_at) : "still holds"),
      el("td", {}, edge.invalidated_by || "—"), el("td", {}, ...sourceLinks(edge.episodes))))));
}

async function searchScreen(view, ctx, initial = "", keep = false) {
  const query = el("input", { type: "search", name: "query", value: initial, required: true });
  const asOf = el("input", { type: "date", name: "as_of" });
  const results = el("section", { "aria-live": "polite" });
  const form = el("form", { role: "search", "aria-label": "Search facts" }, field("Entity or question", query),
    field("As of (what held on…)", asOf, "Leave empty for what holds now."), el("button", { type: "submit" }, "Search facts"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const found = await post("/v1/search", { query: query.value, limit: 50, as_of: asOf.value ? `${asOf.value}T23:59:59Z` : undefined });
      const nodes = [...new Map(found.edges.flatMap((edge) => [edge.source, edge.target]).map((n) => [n.uuid, n])).values()];
      replace(results, el("h3", {}, `${found.edges.length} facts`),
        nodes.length ? el("ul", { className: "chips", "aria-label": "Entities in these facts" }, ...nodes.map((node) =>
          el("li", {}, el("a", { href: `#/entities/${encodeURIComponent(node.uuid)}` }, `${node.name} (${node.type})`)))) : el("p", {}, "No fact matches."),
        found.edges.length ? timelineTable("Matching facts", found.edges) : null);
    } catch (error) { ctx.fail(error); }
  });
  const parts = [el("h2", {}, "Facts and entities"), form, results];
  if (keep) view.append(...parts); else replace(view, ...parts);
  if (initial) form.requestSubmit();
}

async function entityScreen(view, ctx, uuid) {
  const path = `/v1/entities/${encodeURIComponent(uuid)}`;
  const [entity, around] = await Promise.all([get(path), get(`${path}/neighbours`, { include_inactive: true, limit: TIMELINE })]);
  const timeline = around.neighbours.map((n) => n.edge).sort((a, b) => String(b.valid_at || b.created_at).localeCompare(String(a.valid_at || a.created_at)));
  const asOf = el("input", { type: "date", name: "as_of" });
  const shown = el("div", { "aria-live": "polite" });
  const show = () => {
    if (!asOf.value) return replace(shown, timelineTable(`Full timeline (${timeline.length} facts)`, timeline));
    const at = `${asOf.value}T23:59:59Z`;
    const held = timeline.filter((edge) => (!edge.valid_at || edge.valid_at <= at) && (!edge.invalid_at || edge.invalid_at > at));
    replace(shown, timelineTable(`What held on ${asOf.value} (${held.length} facts)`, held));
  };
  asOf.addEventListener("input", show);
  const target = el("input", { name: "to", required: true });
  const depth = el("input", { type: "number", name: "max_depth", min: 1, max: 3, value: "2" });
  const pathResult = el("div", { "aria-live": "polite" });
  const pathForm = el("form", { "aria-label": "Find a path" }, field("To entity (name)", target), field("Hops (1-3)", depth),
    el("button", { type: "submit" }, "Find path"));
  pathForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const to = await resolve(target.value);
      if (!to) { replace(pathResult, el("p", {}, `No entity named “${target.value}”.`)); return; }
      const found = await get("/v1/paths", { from: uuid, to, max_depth: depth.value });
      replace(pathResult, found.paths.length ? el("ol", {}, ...found.paths.map((p) => el("li", {},
        p.nodes.map((n) => n.name).join(" → "), el("div", { className: "detail" }, p.edges.map((e) => e.fact).join("; ")))))
        : el("p", {}, `No path of at most ${found.max_depth} hops between ${found.from.name} and ${found.to.name}.`));
    } catch (error) { ctx.fail(error); }
  });
  replace(view,
    el("p", {}, el("a", { href: "#/entities" }, "← Search facts")),
    el("h2", {}, `${entity.node.name} (${entity.node.type})`),
    entity.aliases.length ? el("p", {}, `Also known as: ${entity.aliases.join(", ")}`) : null,
    el("section", { "aria-labelledby": "current-title" }, el("h3", { id: "current-title" }, "Current facts"),
      entity.edges.length ? el("ul", {}, ...entity.edges.map((edge) => el("li", {}, edge.fact, ` (since ${when(edge.valid_at)})`)))
        : el("p", {}, "No fact about it holds now.")),
    el("section", { "aria-labelledby": "timeline-title" }, el("h3", { id: "timeline-title" }, "Timeline"),
      field("As of (what did we know held on…)", asOf, "Leave empty for the full timeline."), shown),
    el("section", { "aria-labelledby": "graph-title" }, el("h3", { id: "graph-title" }, "Neighbourhood"),
      neighbourhood(entity.node, around.neighbours),
      el("ul", {}, ...around.neighbours.map((n) => el("li", {},
        el("a", { href: `#/entities/${encodeURIComponent(n.node.uuid)}` }, n.node.name), ` — ${n.edge.predicate} (${n.direction}, ${n.edge.status})`)))),
    el("section", { "aria-labelledby": "path-title" }, el("h3", { id: "path-title" }, "Path to another entity"), pathForm, pathResult));
  show();
}
