"""Plain-language edit requests understood without an LLM.

Each rule is a pattern and the change it means; the first match wins, so the more specific rules
("mark as not done" = reopen) come before the general ones ("done" = complete). A request no rule
matches is refused with an explanation: never silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.domain.models import Status
from mnemo.errors import UnsupportedEditError


@dataclass(frozen=True)
class SetStatus:
    status: Status


@dataclass(frozen=True)
class ReplaceText:
    old: str | None  # None = replace the whole text
    new: str


@dataclass(frozen=True)
class AppendText:
    text: str


EditAction = SetStatus | ReplaceText | AppendText

_Q = r"[\"'“”‘’`]?"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(re-?open|un-?archive|restore|not (?:yet )?(?:done|complete|completed|finished)|incomplete|undo (?:complete|completion|archive))\b"), "reopen"),
    (re.compile(r"\bmark (?:it |this )?(?:as )?(?:open|active|to-?do|pending)\b"), "reopen"),
    (re.compile(r"\b(archive|archived|not relevant|no longer relevant|irrelevant|obsolete|outdated|forget (?:it|this|that)|discard)\b"), "archive"),
    (re.compile(r"\b(complete|completed|done|finished|resolved|accomplished|check(?:ed)? (?:it )?off)\b"), "complete"),
]
_REPLACE = re.compile(rf"^(?:replace|change|substitute)\s+{_Q}(.+?){_Q}\s+(?:with|to|by|into)\s+{_Q}(.+?){_Q}\.?$", re.I | re.S)
_REWRITE = re.compile(r"^(?:set|rewrite|change|update|replace)\s+(?:the\s+)?(?:text|thought|memory|it)\s+(?:to|with|as)\s*:?\s*(.+)$", re.I | re.S)
_APPEND = re.compile(r"^(?:append|add)(?:\s+to\s+(?:it|this|the end))?\s*[:\-–]\s*(.+)$", re.I | re.S)

HELP = (
    "supported edit_request forms: 'mark complete', 'archive' / 'not relevant', 'reopen', "
    "'replace <old> with <new>', 'set text to: <new text>', 'append: <text>'; "
    "or pass raw_text to replace the text directly"
)


def parse_edit_request(request: str) -> EditAction:
    text = request.strip()
    for pattern, build in ((_REWRITE, "rewrite"), (_REPLACE, "replace"), (_APPEND, "append")):
        match = pattern.match(text)
        if match:
            if build == "rewrite":
                return ReplaceText(old=None, new=match.group(1).strip())
            if build == "replace":
                return ReplaceText(old=match.group(1).strip(), new=match.group(2).strip())
            return AppendText(text=match.group(1).strip())
    lowered = text.casefold()
    for pattern, action in _RULES:
        if pattern.search(lowered):
            return SetStatus({"reopen": Status.OPEN, "archive": Status.ARCHIVED, "complete": Status.COMPLETED}[action])
    raise UnsupportedEditError(f"cannot apply edit_request {text[:120]!r} without a language model; {HELP}")


def apply_text_edit(current: str, action: ReplaceText | AppendText) -> str:
    if isinstance(action, AppendText):
        return f"{current.rstrip()} {action.text}"
    if action.old is None:
        return action.new
    pattern = re.compile(re.escape(action.old), re.I)
    if not pattern.search(current):
        raise UnsupportedEditError(f"edit_request: the text {action.old[:120]!r} does not occur in the thought; {HELP}")
    return pattern.sub(lambda _: action.new, current, count=1)
