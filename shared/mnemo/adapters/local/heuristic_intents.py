"""`IntentAnnotator` without a model: a table of cue words per label, honestly named.

Labels: `mnemo.domain.intents.INTENT_LABELS` (docs/facts.md). The evidence is
the cue that matched; confidence is lower for a cue in the sentence than for the predicate itself.
"""

from __future__ import annotations

import re

# (label, cues as a regular expression); the first label whose cue matches wins.
_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((label, re.compile(rf"\b(?:{cues})\b", re.IGNORECASE)) for label, cues in (
    ("decision", r"decided|decides|chose|chosen|chooses|settled on|opted for|went with"),
    ("commitment", r"promised|promises|committed to|commits to|will deliver|agreed to|deadline is|is due"),
    ("constraint", r"must not|must|cannot|can't|never|only|at most|at least|is allergic to|requires"),
    ("goal", r"wants to|plans to|aims to|intends to|hopes to|goal is|is trying to|will"),
    ("preference", r"prefers|prefer|likes|like|loves|love|enjoys|dislikes|hates|favou?rs?"),
    ("belief", r"believes|thinks|assumes|expects|suspects|is convinced"),
))
PREDICATE_CONFIDENCE = 0.8
SENTENCE_CONFIDENCE = 0.6


class HeuristicIntentAnnotator:
    name = "heuristic"

    def annotate(self, sentence: str, predicate: str, *, episode: str | None = None) -> dict[str, object] | None:
        """The episode is not read: a cue outside the fact's own words would label the wrong edge."""
        for text, confidence in ((predicate, PREDICATE_CONFIDENCE), (sentence, SENTENCE_CONFIDENCE)):
            for label, cue in _CUES:
                match = cue.search(text)
                if match:
                    return {"label": label, "confidence": confidence, "evidence": match.group(0), "annotator": self.name}
        return None
