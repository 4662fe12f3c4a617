"""The limits every stored value obeys, checked at the edge on every write path and again on read.

One memory with metadata nested hundreds of levels deep, a lone surrogate (`"\\udc80"`), NaN or a
4,000-digit integer used to be stored and then break every read of its user (the JSON encoder of
the response or of the next write failed). Both the commands (create, edit) and the store's
decoder call `check_metadata`, so what is accepted can always be read back.

Messages say what is wrong and name the limit; the error writer puts the field in front.
"""

from __future__ import annotations

import json
import math
from typing import Any

from mnemo.domain.models import MAX_METADATA_BYTES, MAX_TEXT_BYTES

MAX_METADATA_DEPTH = 16  # levels of objects/arrays below the metadata object itself
MAX_METADATA_KEY_CHARS = 128
MAX_METADATA_INTEGER = 2**53  # every JSON reader (JavaScript included) reads it back exactly


def check_unicode(value: str) -> str:
    """Text that is valid UTF-8: a lone surrogate cannot be stored, encoded or sent back."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid UTF-8 text (it contains a lone surrogate code point)") from None
    return value


def check_text(value: str, field: str = "") -> str:
    """Trimmed, valid text within the size limit. `field` is kept for callers that name it; the
    error writer prefixes the name from the error's location, so the message does not repeat it."""
    text = check_unicode(value).strip()
    if not text:
        raise ValueError("must not be empty (after trimming whitespace)")
    size = len(text.encode())
    if size > MAX_TEXT_BYTES:
        raise ValueError(f"must be at most {MAX_TEXT_BYTES} bytes (8 KB); it is {size} bytes")
    return text


def _where(path: list[str]) -> str:
    shown = ".".join(path[:6]) + (".…" if len(path) > 6 else "")
    return f" (at {shown})" if path else ""


def check_metadata(value: Any) -> dict[str, Any]:
    """A JSON object of plain JSON values: string keys, valid text, finite numbers, bounded depth,
    integer range and size. Walks iteratively, so a hostile depth cannot exhaust the stack."""
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    stack: list[tuple[Any, list[str], int]] = [(value, [], 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(f"must be nested at most {MAX_METADATA_DEPTH} levels deep{_where(path[:MAX_METADATA_DEPTH])}")
            for key, child in node.items():
                if not isinstance(key, str):
                    raise ValueError(f"keys must be strings{_where(path)}")
                try:
                    check_unicode(key)
                except ValueError:
                    raise ValueError(f"keys must be valid UTF-8 text (a key contains a lone surrogate){_where(path)}") from None
                if len(key) > MAX_METADATA_KEY_CHARS:
                    raise ValueError(f"keys must be at most {MAX_METADATA_KEY_CHARS} characters{_where(path)}")
                stack.append((child, [*path, key], depth + 1))
        elif isinstance(node, list):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(f"must be nested at most {MAX_METADATA_DEPTH} levels deep{_where(path[:MAX_METADATA_DEPTH])}")
            stack.extend((child, [*path, str(i)], depth + 1) for i, child in enumerate(node))
        elif isinstance(node, str):
            try:
                check_unicode(node)
            except ValueError as exc:
                raise ValueError(f"{exc}{_where(path)}") from None
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, int):
            if abs(node) > MAX_METADATA_INTEGER:
                raise ValueError(f"integers must be between -2^53 and 2^53{_where(path)}")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise ValueError(f"numbers must be finite (no NaN or Infinity){_where(path)}")
        else:
            raise ValueError(f"values must be JSON (object, array, string, number, true, false, null){_where(path)}")
    size = len(json.dumps(value, separators=(",", ":"), allow_nan=False).encode())
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"must be at most {MAX_METADATA_BYTES} bytes (16 KB) as JSON; it is {size} bytes")
    return value
