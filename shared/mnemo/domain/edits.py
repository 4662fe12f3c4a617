"""Edit operations: what an edit request means, as data, and how it is applied.

An `EditInterpreter` (a port; a Bedrock adapter and a deterministic local one) turns a plain-language
request plus the memory's current text into an `EditPlan`: a list of operations, or a refusal with a
reason. `apply_plan` then applies the operations here, once for every interpreter, and checks them
against the text: a span that does not occur, or occurs more than once, refuses the whole edit.
Nothing is applied partially; refusing is always better than a wrong edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mnemo.domain.models import MAX_TEXT_BYTES, Memory, Status
from mnemo.errors import UnsupportedEditError


@dataclass(frozen=True)
class SetText:
    """Replace the whole text."""

    text: str


@dataclass(frozen=True)
class ReplaceSpan:
    """Replace `old` (case-insensitive; exactly one occurrence unless `every`) with `new`."""

    old: str
    new: str
    every: bool = False


@dataclass(frozen=True)
class AppendText:
    text: str


@dataclass(frozen=True)
class DeleteSpan:
    """Remove `text` (case-insensitive; exactly one occurrence)."""

    text: str


@dataclass(frozen=True)
class SetStatus:
    status: Status


EditOperation = SetText | ReplaceSpan | AppendText | DeleteSpan | SetStatus


@dataclass(frozen=True)
class EditPlan:
    """What an interpreter understood: operations to apply in order, or why it will not apply any."""

    operations: tuple[EditOperation, ...] = ()
    refusal: str | None = None

    @classmethod
    def refuse(cls, reason: str) -> EditPlan:
        return cls(refusal=reason)

    def __post_init__(self) -> None:
        if (self.refusal is None) == (not self.operations):
            raise ValueError("an EditPlan has operations or a refusal, not both and not neither")


@dataclass(frozen=True)
class EditOutcome:
    """The new text and status, and one line per applied operation (what the caller confirms to the user)."""

    text: str
    status: Status
    applied: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Revision:
    """An edit's result: the memory as it now is, what was applied, and whether anything changed."""

    memory: Memory
    applied: list[str]
    changed: bool


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _occurrences(text: str, span: str) -> list[re.Match[str]]:
    return list(re.finditer(re.escape(span), text, re.IGNORECASE))


def _one(text: str, span: str, *, every: bool = False) -> list[re.Match[str]]:
    found = _occurrences(text, span)
    if not found:
        raise UnsupportedEditError(f"edit_request: the text {_quote(span)} does not occur in the memory's text; nothing was changed")
    if len(found) > 1 and not every:
        raise UnsupportedEditError(
            f"edit_request: the text {_quote(span)} occurs {len(found)} times; quote more of it to pick one, "
            "or say 'replace every ... with ...'; nothing was changed"
        )
    return found


def _splice(text: str, matches: list[re.Match[str]], new: str) -> str:
    for match in reversed(matches):
        text = text[: match.start()] + new + text[match.end():]
    return text


def _tidy(text: str) -> str:
    """Spaces left by a removed span: no doubles, none before punctuation."""
    text = re.sub(r"[ \t]{2,}", " ", text)
    return re.sub(r" +([.,;:!?])", r"\1", text).strip()


def check_plan(plan: EditPlan) -> None:
    """Reject plans no request can mean: two statuses, or a whole-text rewrite mixed with span edits."""
    statuses = [op for op in plan.operations if isinstance(op, SetStatus)]
    if len({op.status for op in statuses}) > 1:
        raise UnsupportedEditError("edit_request: asks for more than one status; nothing was changed")
    if any(isinstance(op, SetText) for op in plan.operations) and sum(
        not isinstance(op, SetStatus) for op in plan.operations
    ) > 1:
        raise UnsupportedEditError("edit_request: rewrites the whole text and also edits part of it; "
                                   "give the new text alone; nothing was changed")


def apply_plan(text: str, status: Status, plan: EditPlan, *, help_text: str = "") -> EditOutcome:
    """Apply every operation or none. A refusal, a span that is absent or ambiguous, or a result that
    would be empty or too large raises `UnsupportedEditError` naming `edit_request`."""
    if plan.refusal is not None:
        suffix = f"; {help_text}" if help_text else ""
        raise UnsupportedEditError(f"edit_request: not applied: {plan.refusal}{suffix}")
    check_plan(plan)
    applied: list[str] = []
    for op in plan.operations:
        match op:
            case SetText(text=new):
                text = new.strip()
                applied.append(f"set text to {_quote(text)}")
            case ReplaceSpan(old=old, new=new, every=every):
                found = _one(text, old, every=every)
                text = _tidy(_splice(text, found, new))
                many = f" ({len(found)} times)" if len(found) > 1 else ""
                applied.append(f"replaced {_quote(old)} with {_quote(new)}{many}")
            case AppendText(text=extra):
                text = f"{text.rstrip()} {extra.strip()}"
                applied.append(f"appended {_quote(extra.strip())}")
            case DeleteSpan(text=span):
                text = _tidy(_splice(text, _one(text, span), ""))
                applied.append(f"deleted {_quote(span)}")
            case SetStatus(status=new_status):
                applied.append(f"status {status.value} -> {new_status.value}" if new_status != status
                               else f"status already {new_status.value}")
                status = new_status
    if not text.strip():
        raise UnsupportedEditError("edit_request: the edit would leave the memory empty; archive it instead; nothing was changed")
    if len(text.encode()) > MAX_TEXT_BYTES:
        raise UnsupportedEditError(f"edit_request: the edited text would exceed {MAX_TEXT_BYTES} bytes (8 KB); nothing was changed")
    return EditOutcome(text=text, status=status, applied=applied)
