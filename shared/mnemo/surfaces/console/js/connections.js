// Apps connected with MCP authorization (docs/oauth.md), for admin keys: mint a one-time connect code
// for a person (shown once), and list or revoke the apps a user has connected. With OAuth off on the
// deployment the routes answer 404, and the section says how an operator turns it on.
import { ApiError, del, get, post } from "./api.js";
import { button, el, field, replace, when } from "./dom.js";

export function connectionsSection(ctx) {
  const section = el("section", { "aria-labelledby": "connect-title", className: "card" }, el("h3", { id: "connect-title" }, "Connected apps (OAuth)"));
  const mintUser = el("input", { name: "connect_user", value: "default", required: true });
  const minutes = el("input", { name: "minutes", type: "number", min: "1", max: "60", value: "10" });
  const minted = el("div", { "aria-live": "polite" });
  const mint = el("form", { "aria-labelledby": "mint-title" }, el("h4", { id: "mint-title" }, "Mint a connect code"),
    el("p", {}, "Give the code to the person connecting Claude, ChatGPT, VS Code or Cursor: they type it on Mnemo's consent page. It works once."),
    field("For user", mintUser), field("Valid for (minutes)", minutes), el("button", { type: "submit" }, "Mint a code"), minted);
  mint.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const code = await post("/v1/oauth/connect-codes", { user_id: mintUser.value.trim(), minutes: Number(minutes.value) });
      const shown = el("input", { readOnly: true, value: code.code, "aria-label": "The connect code" });
      replace(minted, el("p", { className: "warning" }, `Shown once. For user ${code.user_id}, ${code.scopes.join(", ")}, until ${when(code.expires_at)}.`),
        shown, button("Copy", async () => { await navigator.clipboard.writeText(code.code); ctx.notify("Code copied."); }));
      ctx.notify("Connect code minted.");
    } catch (error) { offOr(section, error, ctx); }
  });
  const grantsUser = el("input", { name: "grants_user", value: "default", required: true });
  const list = el("div", { "aria-live": "polite" });
  const show = async () => {
    const user = grantsUser.value.trim();
    const grants = await get("/v1/oauth/grants", { user_id: user });
    replace(list, grants.length ? el("table", {}, el("caption", {}, `Apps user ${user} connected`),
      el("thead", {}, el("tr", {}, ...["App (as it names itself)", "Scopes", "Resource", "Since", "State", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...grants.map((grant) => el("tr", {}, el("td", {}, grant.client_name || grant.client_id), el("td", {}, grant.scopes.join(", ")),
        el("td", {}, grant.resource), el("td", {}, when(grant.created_at)), el("td", {}, grant.revoked_at ? `revoked ${when(grant.revoked_at)}` : "active"),
        el("td", {}, grant.revoked_at ? "" : button(`Revoke ${grant.client_name || grant.client_id}`, async () => {
          try { await del(`/v1/oauth/grants/${encodeURIComponent(grant.grant_id)}`, { user_id: user }); await show(); ctx.notify("Access revoked."); }
          catch (error) { ctx.fail(error); }
        }))))))
      : el("p", {}, `User ${user} has connected no app.`));
  };
  const grantsForm = el("form", { "aria-labelledby": "grants-title" }, el("h4", { id: "grants-title" }, "Apps a user connected"),
    field("User", grantsUser), el("button", { type: "submit" }, "Show apps"), list);
  grantsForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try { await show(); } catch (error) { offOr(section, error, ctx); }
  });
  section.append(mint, grantsForm);
  return section;
}

function offOr(section, error, ctx) {
  if (error instanceof ApiError && error.status === 404 && /OAuth is off/.test(error.message)) {
    replace(section, el("h3", { id: "connect-title" }, "Connected apps (OAuth)"),
      el("p", {}, "MCP authorization is off on this deployment: apps connect with an API key. An operator turns it on with the stack parameter OAuthEnabled=true (docs/oauth.md)."));
    return;
  }
  ctx.fail(error);
}
