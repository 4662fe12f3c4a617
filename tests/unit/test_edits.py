"""Plain-language edits without an LLM: understood, or refused with an explanation."""

from __future__ import annotations

import pytest

from mnemo.domain.edits import AppendText, ReplaceText, SetStatus, apply_text_edit, parse_edit_request
from mnemo.domain.models import Status
from mnemo.errors import UnsupportedEditError


@pytest.mark.parametrize(
    ("request_text", "status"),
    [
        ("mark complete", Status.COMPLETED),
        ("Mark this as done", Status.COMPLETED),
        ("done!", Status.COMPLETED),
        ("finished it yesterday", Status.COMPLETED),
        ("archive", Status.ARCHIVED),
        ("this is not relevant anymore", Status.ARCHIVED),
        ("no longer relevant", Status.ARCHIVED),
        ("reopen", Status.OPEN),
        ("re-open it please", Status.OPEN),
        ("mark as not done", Status.OPEN),
        ("unarchive", Status.OPEN),
        ("mark it as open", Status.OPEN),
    ],
)
def test_lifecycle_requests(request_text: str, status: Status) -> None:
    assert parse_edit_request(request_text) == SetStatus(status)


def test_replace_with() -> None:
    action = parse_edit_request("replace Tuesday with Wednesday")
    assert action == ReplaceText(old="Tuesday", new="Wednesday")
    assert apply_text_edit("Standups are on Tuesday at 10am", action) == "Standups are on Wednesday at 10am"


def test_quoted_replace_and_case_insensitive_match() -> None:
    action = parse_edit_request("change '10am' to '11am'")
    assert apply_text_edit("Standups at 10AM", action) == "Standups at 11am"


def test_set_text_and_append() -> None:
    assert parse_edit_request("set text to: Buy oat milk") == ReplaceText(old=None, new="Buy oat milk")
    action = parse_edit_request("append: and bread")
    assert action == AppendText(text="and bread")
    assert apply_text_edit("Buy milk", action) == "Buy milk and bread"


def test_replace_of_absent_text_is_an_error_not_a_no_op() -> None:
    with pytest.raises(UnsupportedEditError, match="does not occur"):
        apply_text_edit("Buy milk", parse_edit_request("replace bread with cake"))


@pytest.mark.parametrize("request_text", ["make it sound nicer", "translate to French", "?"])
def test_unsupported_requests_are_explicit_errors(request_text: str) -> None:
    with pytest.raises(UnsupportedEditError, match="supported edit_request forms"):
        parse_edit_request(request_text)
