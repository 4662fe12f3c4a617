"""`make screenshots`: docs/console/*.png, one per console screen, from a fresh local stack with a
little demo data (never from the test run, so tests never rewrite tracked files).

    PYTHONPATH=shared .venv/bin/python scripts/console_screenshots.py [--out docs/console]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from console_first_page import ADMIN, start  # noqa: E402  (the bench's way of starting the local stack)

CHROMIUM = os.environ.get("MNEMO_CHROMIUM", "/usr/bin/chromium")
NOTES = ["Alice leads the platform team and prefers async standups.",
         "The platform team moved its standup to Tuesdays at 10:00.",
         "Alice moved from Lisbon to Porto in June 2025.",
         "Bob joined Acme as a data engineer; he reports to Alice.",
         "The Q3 planning doc lives in the shared drive under /planning/q3.",
         "Customers asked for SSO support; Alice owns the follow-up."]


def seed(base: str) -> dict[str, Any]:
    admin = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    member = admin.post("/v1/keys", json={"name": "demo agent", "scopes": ["memory:read", "memory:write", "memory:delete"],
                                           "user_id": "demo"}).json()["secret"]
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {member}"}, timeout=60)
    ids = [client.post("/v1/memories", json={"content": note, "metadata": {"source": "slack"}}).json()["id"] for note in NOTES]
    client.patch(f"/v1/memories/{ids[1]}", json={"content": "The platform team moved its standup to Wednesdays at 10:00."})
    for place, since in (("Lisbon", "2024-01-01T00:00:00Z"), ("Porto", "2025-06-01T00:00:00Z")):
        client.post("/v1/facts", json={"subject": "Alice", "predicate": "lives_in", "object": place, "valid_at": since})
    edge = client.post("/v1/facts", json={"subject": "Alice", "predicate": "works_at", "object": "Acme"}).json()["edge"]
    client.post("/v1/facts", json={"subject": "Bob", "predicate": "works_at", "object": "Acme"})
    job = client.post("/v1/import", json={"data": [{"content": f"Imported note {i}"} for i in range(240)]}).json()["job_id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and admin.get("/v1/status").json()["pending"]:
        time.sleep(1)
    return {"admin": ADMIN, "member": member, "memory": ids[1], "entity": edge["source"]["uuid"], "job": job}


def shoot(browser: Any, base: str, key: str, route: str, ready: str, path: Path, before: Any = None) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.goto(f"{base}/console/")
    if key:
        page.get_by_label("API key").fill(key)
        page.get_by_role("button", name="Sign in").click()
        page.locator("#who").filter(has_text="Tenant").wait_for()
        page.goto(f"{base}/console/{route}")
    page.locator(ready).first.wait_for()
    if before:
        before(page)
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=path.stem != "search")  # search: its first screen (50 hits is long)
    context.close()
    print(f"wrote {path.relative_to(REPO)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "console")
    out = parser.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    log = out / ".server.log"
    process, base = start(log)
    try:
        data = seed(base)

        def search(page: Any) -> None:
            page.get_by_label("Search", exact=True).fill("where does Alice live")
            page.get_by_role("button", name="Show").click()
            page.get_by_role("heading", name="found for").wait_for()

        def as_of(page: Any) -> None:
            page.get_by_label("As of (what did we know held on…)").fill("2024-06-01")

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            shots = [("sign-in", "", "", "form"), ("memories", data["member"], "#/memories", "main tbody tr"),
                     ("search", data["member"], "#/memories", "main tbody tr", search),
                     ("memory", data["member"], f"#/memories/{data['memory']}", "blockquote"),
                     ("entity", data["member"], f"#/entities/{data['entity']}", "main svg"),
                     ("entity-as-of", data["member"], f"#/entities/{data['entity']}", "main svg", as_of),
                     ("import", data["member"], "#/import", "main progress"), ("jobs", data["admin"], "#/jobs", "main tbody tr"),
                     ("tenant", data["admin"], "#/tenant", "main table")]
            for name, key, route, ready, *before in shots:
                shoot(browser, base, key, route, ready, out / f"{name}.png", *before)
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
