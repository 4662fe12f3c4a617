// The console's shell: sign in with an API key (kept in sessionStorage only), learn what the key may
// do (GET /v1/whoami), and route between the screens by the URL's hash. Each screen is its own module.
import { api, explain, session } from "./api.js";
import { button, el, field, replace } from "./dom.js";
import * as entities from "./entities.js";
import * as jobs from "./jobs.js";
import * as memories from "./memories.js";
import * as memory from "./memory.js";
import * as portability from "./portability.js";
import * as tenant from "./tenant.js";

const view = document.getElementById("view");
const alertBox = document.getElementById("alert");
const statusBox = document.getElementById("status");
const who = document.getElementById("who");
const nav = document.getElementById("sections");
const signOutButton = document.getElementById("sign-out");

const ROUTES = [
  [/^#\/memories\/([^/]+)$/, memory, "memories"],
  [/^#\/memories$/, memories, "memories"],
  [/^#\/entities\/([^/]+)$/, entities, "entities"],
  [/^#\/entities$/, entities, "entities"],
  [/^#\/import$/, portability, "import"],
  [/^#\/jobs\/([^/]+)$/, jobs, "jobs"],
  [/^#\/jobs$/, jobs, "jobs"],
  [/^#\/tenant$/, tenant, "tenant"],
];

/** What every screen receives: who is signed in, what the key may do, and how to speak to the user. */
const context = {
  whoami: null,
  can(permission) {
    const held = this.whoami ? this.whoami.permissions : [];
    return held.includes("admin") || held.includes(permission);
  },
  notify(message) {
    alertBox.replaceChildren();
    statusBox.textContent = message;
  },
  fail(error) {
    statusBox.textContent = "";
    replace(alertBox, el("p", {}, explain(error)));
    if (error && error.status === 401) signOut();
  },
  clear() {
    alertBox.replaceChildren();
    statusBox.textContent = "";
  },
};

function showSignIn(message) {
  nav.hidden = true;
  signOutButton.hidden = true;
  who.textContent = "";
  const input = el("input", { type: "password", name: "key", autocomplete: "off", required: true });
  const form = el("form", { className: "card", "aria-labelledby": "sign-in-title" },
    el("h2", { id: "sign-in-title" }, "Sign in"),
    el("p", {}, "Paste an API key. It stays in this browser tab only (sessionStorage) until you sign out or close the tab."),
    field("API key", input),
    el("button", { type: "submit" }, "Sign in"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    session.signIn(input.value.trim());
    input.value = "";
    await start();
  });
  replace(view, form);
  if (message) replace(alertBox, el("p", {}, message));
  input.focus();
}

function signOut() {
  session.signOut();
  context.whoami = null;
  if (window.location.hash) history.replaceState(null, "", window.location.pathname);
  showSignIn();
}

async function start() {
  if (!session.key()) return showSignIn();
  try {
    context.whoami = (await api("GET", "/v1/whoami")).body;
  } catch (error) {
    session.signOut();
    return showSignIn(explain(error));
  }
  const me = context.whoami;
  who.textContent = `Tenant ${me.tenant} · key ${me.key_prefix} (${me.name}) · ${me.permissions.join(", ")}` +
    (me.user_id ? ` · bound to user ${me.user_id}` : "");
  nav.hidden = false;
  signOutButton.hidden = false;
  for (const link of nav.querySelectorAll("a")) {
    const section = link.dataset.section;
    // Hidden, not just disabled: the console shows only what the key may do (the API refuses anyway).
    link.parentElement.hidden = (section === "tenant" && !context.can("admin")) ||
      (section !== "tenant" && section !== "import" && section !== "jobs" && !context.can("memory:read"));
  }
  context.clear();
  if (!window.location.hash || window.location.hash === "#/") window.location.hash = context.can("memory:read") ? "#/memories" : "#/import";
  else route();
}

async function route() {
  if (!context.whoami) return;
  const hash = window.location.hash;
  context.clear();
  for (const [pattern, screen, section] of ROUTES) {
    const match = hash.match(pattern);
    if (!match) continue;
    for (const link of nav.querySelectorAll("a")) {
      if (link.dataset.section === section) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    replace(view, el("p", {}, "Loading…"));
    try {
      await screen.render(view, context, match[1] ? decodeURIComponent(match[1]) : undefined);
    } catch (error) {
      replace(view, el("h2", {}, "Something went wrong"), button("Try again", route));
      context.fail(error);
    }
    view.focus();
    return;
  }
  replace(view, el("h2", {}, "Not found"), el("p", {}, "There is no such screen. Choose a section above."));
}

signOutButton.addEventListener("click", signOut);
window.addEventListener("hashchange", route);
start();
