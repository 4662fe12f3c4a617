"""What tier-2 extraction produces for one memory, whichever extractor (heuristic or LLM) made it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

CATEGORIES = ("task", "idea", "decision", "preference", "fact", "event", "person", "reference", "note")
Category = Literal["task", "idea", "decision", "preference", "fact", "event", "person", "reference", "note"]
EntityKind = Literal["person", "organization", "place", "date", "product", "other"]
Polarity = Literal["positive", "negative"]


class Entity(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    kind: EntityKind = "other"
    # Other names the same text uses for this entity ("Alice Johnson" ... "Alice"): the fact graph
    # maps them onto one node.
    aliases: list[str] = Field(default_factory=list)


class Fact(BaseModel):
    """A subject–predicate–object triple; provenance (memory id, version) is added by the service.

    `polarity` negative: the text says it is not (or no longer) so ("I no longer work at Acme").
    `valid_at`: the day the text says or implies it became true (resolved against when it was said);
    None: the memory's captured_at."""

    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=300)
    polarity: Polarity = "positive"
    valid_at: datetime | None = None


class Extraction(BaseModel):
    normalized_text: str
    category: Category = "note"
    entities: list[Entity] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
