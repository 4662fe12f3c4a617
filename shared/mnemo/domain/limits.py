"""The limits every stored value obeys, checked at the edge on every write path and again on read.

One memory with metadata nested hundreds of levels deep, a lone surrogate (`"\\udc80"`), NaN or a
4,000-digit integer used to be stored and then break every read of its user (the JSON encoder of
the response or of the next write failed). Both the commands (create, edit) and the store's
decoder call `check_metadata`, so what is accepted can always be read back.

Every JSON a client sends (a REST body, an MCP message, an r3 `json_file`) is nested at most
`MAX_JSON_DEPTH` levels, checked on its text before any parser reads it (`check_json_depth`): a parser
recurses once per level, and 10,000 levels answered "not valid JSON" on REST, a parse error on MCP and
"Error executing tool" (an uncaught RecursionError) from r3's json_file.

Messages say what is wrong and name the limit; the error writer puts the field in front.
"""

from __future__ import annotations

import json
import math
from itertools import accumulate
from typing import Any

from mnemo.domain.models import MAX_METADATA_BYTES, MAX_TEXT_BYTES

MAX_METADATA_DEPTH = 16  # levels of objects/arrays below the metadata object itself
MAX_METADATA_KEY_CHARS = 128
MAX_METADATA_INTEGER = 2**53  # every JSON reader (JavaScript included) reads it back exactly
# Levels of objects/arrays in a whole client document. The deepest valid one is an r3 import over MCP,
# 23 levels (message, params, arguments, data, results, item, metadata and its 16). Python's parser
# fails near 1,500 levels, pydantic's (the MCP SDK's) past 200.
MAX_JSON_DEPTH = 64


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


_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_STEP = [0] * 256
_STEP[ord("[")], _STEP[ord("]")] = 1, -1


def json_depth(text: bytes | str) -> int:
    """How deep JSON text nests objects and arrays, read without parsing it (so without recursion):
    escaped backslashes and quotes are dropped, then every string (what lies between quotes), then all
    but the brackets, whose running count is the depth. Bytes are read as `json.loads` reads them
    (UTF-8, or the UTF-16/32 it detects); in UTF-8 no byte of a multi-byte character is ASCII."""
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogatepass")
    else:
        encoding = json.detect_encoding(text)
        data = text if encoding == "utf-8" else text.decode(encoding, "replace").encode("utf-8", "surrogatepass")
    unquoted = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    brackets = unquoted.translate(_AS_SQUARE, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_json_depth(text: bytes | str) -> None:
    """The one nesting rule for client JSON, applied to its text before it is parsed."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"must be nested at most {MAX_JSON_DEPTH} levels deep (objects and arrays)")
