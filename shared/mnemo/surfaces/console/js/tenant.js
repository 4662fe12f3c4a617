// The tenant (admin keys): usage against each quota, API keys (create with the secret shown once,
// revoke), this tenant's enrichment status, connected apps (connections.js), and the erasure of a user
// with its job's progress.
import { del, get, post } from "./api.js";
import { connectionsSection } from "./connections.js";
import { button, el, facts, field, replace, when } from "./dom.js";

const SCOPES = ["memory:read", "memory:write", "memory:delete", "admin"];

export async function render(view, ctx) {
  if (!ctx.can("admin")) {
    replace(view, el("h2", {}, "Tenant"), el("p", {}, "Only admin keys manage the tenant. Ask an admin for access."));
    return;
  }
  const [usage, status, failed, keys] = await Promise.all([get("/v1/usage"), get("/v1/status"), get("/v1/status/failed"), get("/v1/keys")]);
  const keyList = el("div");
  replace(view, el("h2", {}, `Tenant ${usage.tenant}`),
    usageSection(usage), statusSection(ctx, status, failed, () => render(view, ctx)), keysSection(ctx, keys, keyList), connectionsSection(ctx), eraseUserSection(ctx));
}

function usageSection(usage) {
  const rows = Object.entries(usage.used).map(([counter, used]) => {
    const limit = usage.limits[counter];
    return el("tr", {}, el("th", { scope: "row" }, counter),
      el("td", {}, limit ? el("progress", { max: limit, value: Math.min(used, limit), "aria-label": `${counter} used` }) : "no limit"),
      el("td", {}, limit ? `${used} of ${limit}` : String(used)));
  });
  return el("section", { "aria-labelledby": "usage-title", className: "card" }, el("h3", { id: "usage-title" }, `Usage in ${usage.month}`),
    el("p", {}, `Status: ${usage.status}. Counters start again ${when(usage.resets_at)}.`),
    el("table", {}, el("caption", {}, "Used against each monthly quota"),
      el("thead", {}, el("tr", {}, ...["Counter", "Quota", "Used"].map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, ...rows)));
}

function statusSection(ctx, status, failed, reload) {
  const retry = button("Retry failed memories", async () => {
    try {
      const done = await post("/v1/status/retry", {});
      await reload();
      ctx.notify(`${done.retried} memories queued again; ${done.left} still failed.`);
    } catch (error) { ctx.fail(error); }
  });
  return el("section", { "aria-labelledby": "status-title", className: "card" }, el("h3", { id: "status-title" }, "Enrichment"),
    facts([["Pending (queued or running)", String(status.pending)], ["Failed after every retry", String(status.failed)]]),
    failed.length ? el("table", {}, el("caption", {}, "Failed memories, most recently changed first (at most 50)"),
      el("thead", {}, el("tr", {}, ...["Memory", "User", "Reason", "Changed"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...failed.map((m) => el("tr", {}, el("td", {}, el("a", { href: `#/memories/${encodeURIComponent(m.id)}` }, m.id)),
        el("td", {}, m.user_id), el("td", {}, m.error || "—"), el("td", {}, when(m.updated_at)))))) : null,
    failed.length ? el("p", {}, retry, " Queues this tenant's failed memories again (the operator's dead-letter redrive covers every tenant).") : null);
}

function keysSection(ctx, keys, list) {
  const render = (records) => replace(list, el("table", {}, el("caption", {}, "API keys of this tenant (secrets are never shown again)"),
    el("thead", {}, el("tr", {}, ...["Prefix", "Name", "Permissions", "User", "Expires", "Last used", "State", ""].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...records.map((key) => el("tr", {},
      el("td", {}, key.prefix), el("td", {}, key.name), el("td", {}, key.scopes.join(", ")), el("td", {}, key.user_id || "any"),
      el("td", {}, when(key.expires_at)), el("td", {}, when(key.last_used_at)), el("td", {}, key.revoked_at ? `revoked ${when(key.revoked_at)}` : "active"),
      el("td", {}, key.revoked_at || key.prefix === ctx.whoami.key_prefix ? "" : button(`Revoke ${key.prefix}`, async () => {
        if (!window.confirm(`Revoke key ${key.prefix} (${key.name})? Agents using it are refused within a minute.`)) return;
        try { await del(`/v1/keys/${encodeURIComponent(key.prefix)}`); render(await get("/v1/keys")); ctx.notify(`Key ${key.prefix} revoked.`); }
        catch (error) { ctx.fail(error); }
      })))))));
  render(keys);
  const name = el("input", { name: "name", required: true });
  const boxes = SCOPES.map((scope) => el("input", { type: "checkbox", name: "scope", value: scope, id: `scope-${scope.replace(":", "-")}` }));
  const user = el("input", { name: "user_id" });
  const expires = el("input", { type: "date", name: "expires_at" });
  const secret = el("div", { "aria-live": "polite" });
  const form = el("form", { "aria-labelledby": "new-key-title" }, el("h4", { id: "new-key-title" }, "Create a key"), field("Name", name),
    el("fieldset", {}, el("legend", {}, "Permissions"), ...boxes.map((box) => el("div", { className: "field inline" }, box, el("label", { htmlFor: box.id }, box.value)))),
    field("Bound to user (optional)", user), field("Expires (optional)", expires), el("button", { type: "submit" }, "Create key"), secret);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const scopes = boxes.filter((box) => box.checked).map((box) => box.value);
    if (!scopes.length) { ctx.fail("Choose at least one permission for the key."); return; }
    try {
      const created = await post("/v1/keys", { name: name.value, scopes, user_id: user.value.trim() || undefined,
        expires_at: expires.value ? `${expires.value}T23:59:59Z` : undefined });
      const shown = el("input", { readOnly: true, value: created.secret, "aria-label": "The new key's secret" });
      replace(secret, el("p", { className: "warning" }, "Copy the secret now: it is shown once and never again."), shown,
        button("Copy", async () => { await navigator.clipboard.writeText(created.secret); ctx.notify("Secret copied."); }));
      render(await get("/v1/keys"));
      ctx.notify(`Key ${created.prefix} created.`);
    } catch (error) { ctx.fail(error); }
  });
  return el("section", { "aria-labelledby": "keys-title", className: "card" }, el("h3", { id: "keys-title" }, "API keys"), list, form);
}

function eraseUserSection(ctx) {
  const user = el("input", { name: "user_id", required: true });
  const typed = el("input", { name: "confirm", autocomplete: "off" });
  const progress = el("div", { "aria-live": "polite" });
  const form = el("form", { className: "danger", "aria-labelledby": "erase-user-title" }, el("h3", { id: "erase-user-title" }, "Erase a user"),
    el("p", {}, "Erases every memory of the user in this tenant, with everything derived from them. It cannot be undone."),
    field("User id", user), field("Type the user id again to confirm", typed), el("button", { type: "submit" }, "Erase the user"), progress);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (typed.value.trim() !== user.value.trim()) { ctx.fail("Nothing was erased: the confirmation does not match the user id."); return; }
    try {
      const job = await del(`/v1/users/${encodeURIComponent(user.value.trim())}`, { hard: true });
      replace(progress, el("p", {}, "Erasure queued. "), el("a", { href: `#/jobs/${encodeURIComponent(job.job_id)}` }, "Follow its progress"));
      ctx.notify("Erasure queued.");
    } catch (error) { ctx.fail(error); }
  });
  return form;
}
