"""Annotating one fact edge with its intent, for `record_fact` and the enrichment worker alike.

An accepted write is never lost to its annotation: when the annotator cannot answer (Bedrock failed
its three attempts), the edge is stored with `{annotator, error}` as its `intent_meta` (the failure
is visible on the edge and in the response), and no `intents` credit is counted (docs/facts.md).
"""

from __future__ import annotations

import logging
from typing import Any

from mnemo.domain.intents import failed_annotation
from mnemo.errors import DependencyError
from mnemo.ports import IntentAnnotator

logger = logging.getLogger(__name__)


def annotate_edge(annotator: IntentAnnotator, sentence: str, predicate: str,
                  episode: str | None = None) -> dict[str, Any] | None:
    try:
        return annotator.annotate(sentence, predicate, episode=episode)
    except DependencyError as exc:
        logger.warning("intent annotation failed; the edge is kept without a label: %s", exc.message)
        return failed_annotation(annotator.name, exc.message)
