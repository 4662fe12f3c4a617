"""The one nesting rule for client JSON (issue 53 §3): `json_depth` reads the depth from the text without
parsing it, so 10,000 levels cost no recursion, and a bracket inside a string is text, not nesting."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemo.domain.limits import MAX_JSON_DEPTH, check_json_depth, json_depth


def depth_of(value: Any) -> int:
    """The reference: levels of objects/arrays in a parsed value."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


TRICKY = st.text(alphabet='[]{}"\\/:,ab\u00e9\u225b\U0001f600', max_size=8)  # brackets, quotes, escapes in text
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | TRICKY,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3), max_leaves=20)


@given(VALUES)
def test_depth_read_from_the_text_is_the_parsed_values(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth(text) == json_depth(text.encode()) == json_depth(text.encode("utf-16")) == depth_of(value)


@pytest.mark.parametrize(("text", "depth"), [
    ("1", 0), ('"[[{"', 0), ("[]", 1), ('{"a": [{"b": "]]]}"}]}', 3), (r'["\\", ["\"["]]', 2), (r'{"k\\\"[": []}', 2),
])
def test_strings_and_escapes_are_text_not_nesting(text: str, depth: int) -> None:
    assert json_depth(text) == depth


def test_the_limit_and_ten_thousand_levels_without_recursion() -> None:
    check_json_depth("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)  # at the limit: fine
    for levels in (MAX_JSON_DEPTH + 1, 10_000):
        with pytest.raises(ValueError, match=f"^must be nested at most {MAX_JSON_DEPTH} levels deep"):
            check_json_depth(b"[" * levels + b"]" * levels)
    with pytest.raises(ValueError):  # unclosed (invalid) still counts: a parser would recurse into it first
        check_json_depth("{" * 10_000)
