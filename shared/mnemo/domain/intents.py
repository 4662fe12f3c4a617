"""Intent annotations of fact edges (`extract_intent=true`, docs/facts.md "Intents").

An annotation is stored on the edge as `intent_meta`: `{label, confidence, evidence, annotator}`.
An annotator that failed leaves `{annotator, error}` instead, so the failure is visible on the edge;
only an edge with a label counts an `intents` credit (services/tenancy/metering.py).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

IntentLabel = Literal["goal", "preference", "commitment", "constraint", "decision", "belief"]
INTENT_LABELS: tuple[str, ...] = get_args(IntentLabel)


class IntentAnnotation(BaseModel):
    label: IntentLabel
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str = Field(min_length=1, max_length=500)  # a span of the annotated text, verbatim
    annotator: str


def is_annotated(intent_meta: dict[str, Any] | None) -> bool:
    """An edge that carries a label (what an `intents` credit pays for), not a failure record."""
    return bool(intent_meta) and "label" in intent_meta  # type: ignore[operator]


def failed_annotation(annotator: str, reason: str) -> dict[str, Any]:
    """What a failed annotation leaves on the edge: who failed and why, no label, no credit."""
    return {"annotator": annotator, "error": reason[:300]}
