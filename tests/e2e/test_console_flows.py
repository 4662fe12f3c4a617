"""The console in a real browser (issue 30): Debian's Chromium through Playwright against the local
stack (`python -m mnemo.local`), one browser for the module. Each test signs in with a key bound to
its own user, so the data of the other e2e tests (user `default`) is never seen or changed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import LocalServer
from tests.e2e.console_support import call, new_key, signed_in


@pytest.fixture(scope="module")
def member(server: LocalServer) -> str:
    """A key bound to user `console-flows` that may read, write and delete: this user's data only
    (an admin key cannot be bound; the tenant screen's test uses the stack's admin key)."""
    return new_key(server, "console flows", ["memory:read", "memory:write", "memory:delete"], user_id="console-flows")


def test_sign_in_browse_pages_of_50_search_with_explain_and_sign_out(browser: Any, server: LocalServer, member: str) -> None:
    items = [{"content": f"Browse note {i:03d} about the Lisbon office", "captured_at": f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z"}
             for i in range(55)]
    imported = call(server, member, "POST", "/v1/import", json={"data": items})
    assert imported.status_code == 200 and len(imported.json()["imported"]) == 55, imported.text
    watched = signed_in(browser, server, member)
    page = watched.page
    assert "bound to user console-flows" in page.locator("#who").inner_text()
    assert page.evaluate("sessionStorage.getItem('mnemo.apiKey')") == member and member not in page.url
    page.get_by_role("heading", name=re.compile("Page 1: 50 memories")).wait_for()
    assert page.locator("tbody tr").count() == 50  # one page of 50, never more
    page.get_by_role("button", name="Next page").click()
    page.get_by_role("heading", name=re.compile("Page 2: 5 memories")).wait_for()
    page.get_by_role("button", name="First page").click()
    page.get_by_role("heading", name=re.compile("Page 1: 50 memories")).wait_for()
    # search with explain: each hit shows its score and the score's components
    page.get_by_label("Search", exact=True).fill("Browse note 007")
    page.get_by_role("button", name="Show").click()
    page.get_by_role("heading", name=re.compile("found for")).wait_for()
    first = page.locator("tbody tr").first
    assert "Browse note" in first.inner_text() and re.search(r"\w+ \d\.\d{3}", first.locator(".explain").inner_text())
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("API key").wait_for()
    assert page.evaluate("sessionStorage.getItem('mnemo.apiKey')") is None
    assert not watched.errors


def test_a_memory_is_edited_archived_reopened_and_erased_with_its_receipt(browser: Any, server: LocalServer, member: str) -> None:
    made = call(server, member, "POST", "/v1/memories", json={"content": "The wiki lives on the old server", "metadata": {"team": "ops"}})
    memory_id = made.json()["id"]
    watched = signed_in(browser, server, member)
    page = watched.page
    watched.goto(server, f"#/memories/{memory_id}")
    page.get_by_label("Text", exact=True).fill("The wiki lives on the new server")
    page.get_by_role("button", name="Save changes").click()
    page.get_by_text("Saved as version 2").wait_for()
    assert page.locator("blockquote").inner_text() == "The wiki lives on the new server"
    assert "v2 edited" in page.locator(".history").inner_text()
    page.get_by_role("button", name="Archive").click()
    page.get_by_text("Archived. Reopen it to undo.").wait_for()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").json()["status"] == "archived"
    page.get_by_role("button", name="Reopen").click()
    page.get_by_text("Reopened.").wait_for()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").json()["status"] == "open"
    # erasure needs the typed confirmation: a wrong word erases nothing (control: the memory is still there)
    page.get_by_label("to confirm").fill("delete")
    page.get_by_role("button", name="Erase permanently").click()
    page.locator("#alert").filter(has_text="Nothing was erased").wait_for()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").status_code == 200
    page.get_by_label("to confirm").fill("erase")
    page.get_by_role("button", name="Erase permanently").click()
    page.get_by_role("heading", name="Erased").wait_for()
    assert memory_id in page.locator("dl").inner_text()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").status_code == 404
    assert not watched.errors and not watched.dialogs


def test_an_entity_timeline_with_as_of_and_its_neighbourhood(browser: Any, server: LocalServer, member: str) -> None:
    for place, since in (("Lisbon", "2024-01-01T00:00:00Z"), ("Porto", "2025-06-01T00:00:00Z")):
        recorded = call(server, member, "POST", "/v1/facts", json={"subject": "Marta", "predicate": "lives_in", "object": place, "valid_at": since})
        assert recorded.status_code == 201, recorded.text
    watched = signed_in(browser, server, member)
    page = watched.page
    watched.goto(server, "#/entities")
    page.get_by_label("Entity or question").fill("Marta")
    page.get_by_role("button", name="Search facts").click()
    page.get_by_role("link", name=re.compile("^Marta")).first.click()
    page.get_by_role("heading", name=re.compile("^Marta")).wait_for()
    current = page.locator("section", has=page.get_by_role("heading", name="Current facts")).inner_text()
    assert "Porto" in current and "Lisbon" not in current
    timeline = page.locator("table", has=page.locator("caption", has_text="Full timeline"))
    assert "Lisbon" in timeline.inner_text() and "Porto" in timeline.inner_text()
    page.get_by_label("As of (what did we know held on…)").fill("2024-06-01")
    then = page.locator("table", has=page.locator("caption", has_text="What held on 2024-06-01"))
    assert "Lisbon" in then.inner_text() and "Porto" not in then.inner_text()
    assert page.locator("svg[role=img] text").filter(has_text="Porto").count() == 1  # the graph names its neighbours
    page.get_by_label("To entity (name)").fill("Porto")
    page.get_by_role("button", name="Find path").click()
    page.get_by_text("Marta → Porto").wait_for()
    assert not watched.errors


def test_an_import_splits_under_the_body_limit_behind_one_progress_bar(browser: Any, server: LocalServer, member: str) -> None:
    # 420 items, some of 6 KB: more than one request may carry in items (200) and in bytes (256 KB)
    items = [{"content": f"Imported fact {i}: " + ("x" * 6000 if i % 10 == 0 else "short"), "id": f"imp-{i}"} for i in range(420)]
    watched = signed_in(browser, server, member)
    page = watched.page
    sizes: list[int] = []
    page.on("request", lambda r: sizes.append(len(r.post_data_buffer or b"")) if r.url.endswith("/v1/import") else None)
    watched.goto(server, "#/import")
    page.get_by_label("File (Mnemo export, r3 array or mem0 export)").set_input_files(
        files=[{"name": "mem0.json", "mimeType": "application/json", "buffer": json.dumps({"results": items}).encode()}])
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("Done: 420 items in").wait_for(timeout=120_000)
    assert page.locator("progress").evaluate("p => [p.value, p.max]") == [420, 420]
    assert page.get_by_text("420 imported, 0 facts recorded again, 0 skipped, 0 failed.").is_visible()
    assert len(sizes) >= 3 and max(sizes) < 256 * 1024, sizes
    with page.expect_download() as download:  # the export: every page of the user in one Mnemo export file
        page.get_by_role("button", name="Download export").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert {"Imported fact 7: short", "Imported fact 419: short"} <= {m["content"] for m in exported["memories"]}
    # the jobs list: an import of more than 200 items sent at once is a job (the console follows it)
    job = call(server, member, "POST", "/v1/import", json={"data": [{"content": f"job note {i}"} for i in range(201)]}).json()["job_id"]
    watched.goto(server, "#/jobs")
    page.get_by_role("link", name=job[:8]).click()
    page.get_by_role("heading", name=f"Job {job}").wait_for()
    page.locator("dd").filter(has_text="completed").wait_for(timeout=120_000)  # followed until it ends
    assert not watched.errors


def test_keys_as_admin_then_as_a_read_only_key_whose_controls_are_hidden(browser: Any, server: LocalServer, member: str) -> None:
    spare = new_key(server, "console spare", ["memory:read"], user_id="console-flows")
    spare_prefix = call(server, spare, "GET", "/v1/whoami").json()["key_prefix"]
    admin = server.key  # the stack's admin key (unbound)
    memory_id = call(server, member, "POST", "/v1/memories", json={"content": "Read-only keys see this"}).json()["id"]
    watched = signed_in(browser, server, admin)
    page = watched.page
    watched.goto(server, "#/tenant")
    page.get_by_label("Name", exact=True).fill("console reader")
    page.get_by_label("memory:read").check()
    page.get_by_label("Bound to user (optional)").fill("console-flows")
    page.get_by_role("button", name="Create key").click()
    shown = page.get_by_label("The new key's secret")
    shown.wait_for()
    secret = shown.input_value()
    assert secret.startswith("mn_") and page.get_by_text("shown once").is_visible()
    page.get_by_role("cell", name="console reader").wait_for()  # the list reloads after the secret is shown
    assert page.get_by_role("cell", name="console reader").is_visible()
    watched.accept = True  # the console's own confirm() before revoking
    page.get_by_role("button", name=f"Revoke {spare_prefix}").click()
    page.get_by_text(f"Key {spare_prefix} revoked.").wait_for()
    listed = {k["prefix"]: k for k in call(server, admin, "GET", "/v1/keys").json()}
    assert listed[spare_prefix]["revoked_at"] and not listed[secret[:len(spare_prefix)]]["revoked_at"]
    # the read-only key: no tenant section, no edit / archive / erase controls ...
    reader = signed_in(browser, server, secret)
    rpage = reader.page
    assert rpage.get_by_role("link", name="Memories").is_visible()
    assert not rpage.get_by_role("link", name="Tenant").is_visible()
    reader.goto(server, f"#/memories/{memory_id}")
    rpage.get_by_text("This key may only read memories.").wait_for()
    for control in ("Save changes", "Archive", "Erase permanently"):
        assert rpage.get_by_role("button", name=control).count() == 0
    reader.goto(server, "#/tenant")
    rpage.get_by_text("Only admin keys manage the tenant.").wait_for()
    reader.goto(server, "#/memories/no-such-memory")  # an API error is said in words with what to do
    said = rpage.locator("#alert").filter(has_text="Not found")
    said.wait_for()
    assert "may have been erased" in said.inner_text() and "{" not in said.inner_text()
    # ... and the API refuses anyway, with the same key the console holds (control: the admin may)
    assert call(server, secret, "PATCH", f"/v1/memories/{memory_id}", json={"content": "changed"}).status_code == 403
    assert call(server, secret, "GET", "/v1/keys").status_code == 403
    assert call(server, admin, "GET", "/v1/keys").status_code == 200
    assert not watched.errors and not reader.errors


def test_the_main_flow_works_by_keyboard_alone(browser: Any, server: LocalServer, member: str) -> None:
    memory_id = call(server, member, "POST", "/v1/memories", json={"content": "Keyboard users reach this"}).json()["id"]
    page = browser.new_context().new_page()
    page.goto(f"{server.base}/console/")
    page.get_by_label("API key").wait_for()
    assert page.evaluate("document.activeElement.name") == "key"  # the key field has the focus

    def tab_to(text: str, limit: int = 150) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent.trim()") == text:
                return
        raise AssertionError(f"Tab never reached {text!r}")

    page.keyboard.type(member)
    page.keyboard.press("Enter")
    page.get_by_role("link", name="Keyboard users reach this").wait_for()
    tab_to("Keyboard users reach this")
    page.keyboard.press("Enter")
    page.locator("blockquote").filter(has_text="Keyboard users reach this").wait_for()
    tab_to("Archive")
    page.keyboard.press("Enter")
    page.get_by_text("Archived. Reopen it to undo.").wait_for()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").json()["status"] == "archived"
    tab_to("Reopen")
    page.keyboard.press("Enter")
    page.get_by_text("Reopened.").wait_for()
    assert call(server, member, "GET", f"/v1/memories/{memory_id}").json()["status"] == "open"


def test_an_admin_erases_a_user_and_follows_the_job(browser: Any, server: LocalServer) -> None:
    doomed = call(server, server.key, "POST", "/v1/memories", json={"content": "Doomed user's note", "user_id": "console-doomed"})
    kept = call(server, server.key, "POST", "/v1/memories", json={"content": "Kept user's note", "user_id": "console-kept"})
    watched = signed_in(browser, server, server.key)
    page = watched.page
    watched.goto(server, "#/tenant")
    page.get_by_label("User id", exact=True).fill("console-doomed")
    page.get_by_label("Type the user id again to confirm").fill("console-dooomed")  # a typo erases nothing
    page.get_by_role("button", name="Erase the user").click()
    page.locator("#alert").filter(has_text="Nothing was erased").wait_for()
    page.get_by_label("Type the user id again to confirm").fill("console-doomed")
    page.get_by_role("button", name="Erase the user").click()
    page.get_by_role("link", name="Follow its progress").click()
    page.locator("dd").filter(has_text="completed").wait_for(timeout=120_000)
    assert call(server, server.key, "GET", f"/v1/memories/{doomed.json()['id']}").status_code == 404
    assert call(server, server.key, "GET", f"/v1/memories/{kept.json()['id']}").status_code == 200  # control
    assert not watched.errors
