"""`text.tokenize` is the local mirror of OpenSearch's `mnemo_text` analyzer (queries.TEXT_ANALYSIS):
possessive, lower case, stopwords, then the plural fold, in that order."""

from __future__ import annotations

from mnemo.adapters.opensearch.queries import TEXT_ANALYSIS
from mnemo.domain.text import STOPWORDS, tokenize


def test_stopwords_go_before_the_plural_fold_as_in_the_analyzer() -> None:
    # The analyzer's order: a stopword ending in s is dropped whole, never folded into a word
    assert TEXT_ANALYSIS["analyzer"]["mnemo_text"]["filter"] == ["mnemo_possessive", "lowercase", "mnemo_stop", "mnemo_plural"]
    assert {"does", "this"} <= STOPWORDS
    assert tokenize("Where does Alice live? This one") == ["alice", "live", "one"]  # not "doe", "thi"
    # Positive control: words that are no stopwords are still folded, possessives stripped
    assert tokenize("Alice's cats chase mice") == ["alice", "cat", "chase", "mice"]
    assert tokenize("ours") == ["our"]  # no stopword before the fold: the analyzer indexes "our" too
