"""Helpers of the console's browser tests: API calls for their data, a signed-in page that records
anything hostile text could make run (a dialog, a page error, a window flag), and the axe check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from axe_playwright_python.sync_playwright import Axe

from tests.e2e.conftest import LocalServer

SERIOUS = ("serious", "critical")


def call(server: LocalServer, key: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, server.base + path, headers={"Authorization": f"Bearer {key}"}, timeout=60, **kwargs)


def new_key(server: LocalServer, name: str, scopes: list[str], user_id: str | None = None) -> str:
    made = call(server, server.key, "POST", "/v1/keys", json={"name": name, "scopes": scopes, "user_id": user_id})
    assert made.status_code == 201, made.text
    return str(made.json()["secret"])


@dataclass
class Watched:
    """A page and what it did that it must not: dialogs opened, uncaught errors."""

    page: Any
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    accept: bool = False  # the console's own confirm() (revoking a key); hostile text must never open one

    def answer(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.accept() if self.accept else dialog.dismiss()

    def goto(self, server: LocalServer, route: str) -> None:
        self.page.goto(f"{server.base}/console/{route}")

    def pwned(self) -> Any:
        return self.page.evaluate("window.__pwned")


def signed_in(browser: Any, server: LocalServer, key: str) -> Watched:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    watched = Watched(page)
    page.on("dialog", watched.answer)
    page.on("pageerror", lambda error: watched.errors.append(str(error)))
    page.goto(f"{server.base}/console/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#who").filter(has_text="Tenant").wait_for()
    return watched


def serious_violations(page: Any) -> list[str]:
    """axe-core (shipped in axe-playwright-python) on the page as it is: serious and critical only."""
    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} x{len(v['nodes'])}" for v in found if v["impact"] in SERIOUS]
