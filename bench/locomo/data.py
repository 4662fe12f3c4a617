"""Load a LoCoMo JSON file into conversations of turns and questions, with the evidence normalised.

The rules follow ../shared/bench/README.md: joined ids (`"D8:6; D9:17"`) are split, malformed ids are
repaired (`"D:11:26"` → `D11:26`, `"D30:05"` → `D30:5`), ids absent from their conversation are
dropped, and questions left without evidence are skipped. Every repair is counted, so a run says
exactly what it changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

SESSION_KEY = re.compile(r"^session_(\d+)$")
# "D<session>:<turn>", tolerating the two malformations seen in the data: an extra colon after the
# "D" and zero-padded numbers.
EVIDENCE_ID = re.compile(r"^D(:?)(\d+):(\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class Turn:
    """One utterance; it becomes one memory."""

    session: int
    dia_id: str
    speaker: str
    text: str
    date: datetime
    blip_caption: str | None = None

    @property
    def plain_text(self) -> str:
        """`speaker: text` — what the baselines index."""
        return f"{self.speaker}: {self.text}"

    @property
    def content(self) -> str:
        """What Mnemo is given: the plain text plus the caption of a shared image, when there is one."""
        if self.blip_caption:
            return f"{self.plain_text} [shared image: {self.blip_caption}]"
        return self.plain_text


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]  # normalised dia_ids, all present in the conversation, never empty
    index: int  # position in the sample's `qa` list, so a result can be traced back


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    def turn(self, dia_id: str) -> Turn:
        return self.by_id[dia_id]

    @cached_property
    def by_id(self) -> dict[str, Turn]:
        return {t.dia_id: t for t in self.turns}


@dataclass
class EvidenceFixes:
    """How many evidence items each normalisation rule touched."""

    split_joined: int = 0  # strings holding several ids, split apart
    extra_colon: int = 0  # "D:11:26" → "D11:26"
    zero_padded: int = 0  # "D30:05" → "D30:5"
    dropped_unknown: int = 0  # unparseable, or not a turn of this conversation
    duplicates: int = 0  # the same id twice in one question
    questions_skipped: int = 0  # no evidence left
    dropped: list[str] = field(default_factory=list)  # "conv-42: 'D'" — what was dropped, for the report

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def parse_session_date(value: str) -> datetime:
    """`"1:56 pm on 8 May, 2023"` → an aware UTC datetime (the data has no time zone; we read it as UTC)."""
    return datetime.strptime(value.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def canonical_id(raw: str, fixes: EvidenceFixes) -> str | None:
    """One evidence id in canonical form, or None when it cannot be read as one."""
    match = EVIDENCE_ID.match(raw.strip())
    if match is None:
        return None
    extra_colon, session, turn = match.groups()
    if extra_colon:
        fixes.extra_colon += 1
    if session != str(int(session)) or turn != str(int(turn)):
        fixes.zero_padded += 1
    return f"D{int(session)}:{int(turn)}"


def normalise_evidence(raw: Iterable[str], known: set[str], fixes: EvidenceFixes, label: str = "") -> tuple[str, ...]:
    """Split, repair, drop unknown ids and duplicates; order is kept."""
    out: list[str] = []
    for item in raw:
        parts = [p for p in re.split(r"[;,]", item) if p.strip()]
        if len(parts) > 1:
            fixes.split_joined += 1
        for part in parts:
            dia_id = canonical_id(part, fixes)
            if dia_id is None or dia_id not in known:
                fixes.dropped_unknown += 1
                fixes.dropped.append(f"{label}: {part.strip()!r}" if label else repr(part.strip()))
            elif dia_id in out:
                fixes.duplicates += 1
            else:
                out.append(dia_id)
    return tuple(out)


def conversation_turns(conversation: dict[str, Any]) -> list[Turn]:
    """All turns in session order, then turn order. Sessions without turns (some samples list dates
    for sessions they do not contain) are ignored."""
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := SESSION_KEY.match(key)) and conversation[key]
    )
    turns: list[Turn] = []
    for number, key in sessions:
        date = parse_session_date(conversation[f"{key}_date_time"])
        for item in conversation[key]:
            turns.append(
                Turn(
                    session=number,
                    dia_id=item["dia_id"],
                    speaker=item["speaker"],
                    text=item["text"],
                    date=date,
                    blip_caption=item.get("blip_caption") or None,
                )
            )
    return turns


def parse_sample(sample: dict[str, Any], fixes: EvidenceFixes) -> Conversation:
    sample_id = str(sample["sample_id"])
    turns = conversation_turns(sample["conversation"])
    known = {t.dia_id for t in turns}
    questions = []
    for index, qa in enumerate(sample.get("qa", [])):
        evidence = normalise_evidence(qa.get("evidence") or [], known, fixes, sample_id)
        if not evidence:
            fixes.questions_skipped += 1
            continue
        questions.append(
            Question(question=qa["question"], category=int(qa["category"]), evidence=evidence, index=index)
        )
    return Conversation(sample_id=sample_id, turns=tuple(turns), questions=tuple(questions))


def iter_conversations(
    samples: Iterable[dict[str, Any]], fixes: EvidenceFixes, only: set[str] | None = None
) -> Iterator[Conversation]:
    for sample in samples:
        if only is None or str(sample["sample_id"]) in only:
            yield parse_sample(sample, fixes)


def load(path: str | Path, only: set[str] | None = None) -> tuple[list[Conversation], EvidenceFixes]:
    """The conversations of a LoCoMo file (all, or those whose sample_id is in `only`) and what
    normalising their evidence changed."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    fixes = EvidenceFixes()
    conversations = list(iter_conversations(samples, fixes, only))
    if only is not None:
        missing = only - {c.sample_id for c in conversations}
        if missing:
            raise ValueError(f"no such conversation(s) in {path}: {', '.join(sorted(missing))}")
    return conversations, fixes
