"""Issue 28, round 12: the levers measured and not taken, on round 9's "prescored 100" ranking.

- `--record DIR`: write the texts the harness embeds (`texts-<cache>.json`), for mpnet_vectors.py.
- `--vectors DIR` / `--states DIR`: the semantic leg's vectors / the late-interaction token states
  from all-mpnet-base-v2 (mpnet_vectors.py's files in DIR) instead of MiniLM; with `--weights`, the
  fused score's lexical and semantic weights ("0.5,0.4" ships).
- `--stem-boost B`: a Snowball English stemmed copy of the `text` field beside it, at B x its boost
  (needs `pip install snowballstemmer`; the query's words are stemmed for that field alone).

    PYTHONPATH=shared:. .venv/bin/python bench/round12/alternatives.py [--vectors DIR] [--states DIR] [--stem-boost B]
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

import bench.ablation_locomo as ablation  # noqa: E402
from bench import issue28_round3 as round3  # noqa: E402
from bench import issue28_round6 as round6  # noqa: E402
from bench import issue28_round9 as round9  # noqa: E402
from mnemo import ports  # noqa: E402
from mnemo.adapters.local import index as local_index  # noqa: E402
from mnemo.adapters.local.minilm_embedder import TokenStates  # noqa: E402
from mnemo.domain import scoring  # noqa: E402
from mnemo.domain.text import tokenize  # noqa: E402


def record(out: Path) -> None:
    """Every text each cache is asked for, by cache file name."""
    seen: dict[str, dict[str, None]] = {}
    embed = ablation.Embeddings.__call__

    def recording(self: Any, texts: list[str]) -> Any:
        seen.setdefault(self.path.name, {}).update(dict.fromkeys(texts))
        return embed(self, texts)

    ablation.Embeddings.__call__ = recording  # type: ignore[method-assign]
    round3.measure({}, REPO.parent / "shared" / "bench" / "locomo-dev.json",
                   REPO.parent / "shared" / "bench" / "longmemeval-s-dev.json.gz")
    for name, texts in seen.items():
        (out / f"texts-{name.removesuffix('-minilm.npz')}.json").write_text(json.dumps(list(texts)))


def use_vectors(directory: Path) -> None:
    """The harness's vector caches read from `directory` (mpnet), never computed: a text missing fails."""
    init = ablation.Embeddings.__init__

    def other(self: Any, path: Path) -> None:
        init(self, directory / path.name.replace("minilm", "mpnet"))
        self.model = None

    ablation.Embeddings.__init__ = other  # type: ignore[method-assign]


class PickledStates:
    """mpnet_vectors.py's token states, looked up by text, as `TokenStates`."""

    def __init__(self, directory: Path) -> None:
        self.held: dict[str, Any] = {}
        for path in directory.glob("*-mpnet-states.pkl"):
            with path.open("rb") as fh:
                self.held |= pickle.load(fh)

    def token_states(self, texts: list[str]) -> list[TokenStates]:
        out = []
        for text in texts:
            pieces, codes, scales = self.held[hashlib.sha1(text.encode()).hexdigest()]
            out.append(TokenStates(pieces, codes.astype(np.float32) * scales[:, None]))
        return out


def stem_field(boost: float) -> None:
    """A `text_stem` field: the text's tokens stemmed, the query's stemmed for it alone."""
    import snowballstemmer  # type: ignore[import-not-found]

    stem = functools.lru_cache(maxsize=None)(snowballstemmer.stemmer("english").stemWord)

    class Stemmed(local_index._Field):
        def terms(self, text: str) -> list[str]:
            return [stem(w) for w in tokenize(text)]

        def scores(self, terms: set[str], doc_count: int, out: np.ndarray, weight: float) -> None:
            super().scores({stem(t) for t in terms}, doc_count, out, weight)

    post_init = local_index._Partition.__post_init__

    def with_stems(self: Any) -> None:
        post_init(self)
        if "text_stem" in self.boosts:
            self.fields["text_stem"] = Stemmed()

    field_text = local_index._field_text
    local_index._Partition.__post_init__ = with_stems  # type: ignore[method-assign]
    local_index._field_text = lambda doc, name: field_text(doc, name.removesuffix("_stem"))
    fields = (*ports.LEXICAL_FIELDS.items(), ("text_stem", boost * ports.LEXICAL_FIELDS["text"]))
    round3.SHIPPED = dataclasses.replace(round3.SHIPPED, fields=fields)


def main() -> int:
    parser = round3.arguments(__doc__ or "")
    parser.add_argument("--record", type=Path)
    parser.add_argument("--vectors", type=Path)
    parser.add_argument("--states", type=Path)
    parser.add_argument("--weights", default="0.5,0.4")
    parser.add_argument("--stem-boost", type=float, default=0.0)
    args = parser.parse_args()
    if args.record:
        record(args.record)
        return 0
    if args.vectors:
        use_vectors(args.vectors)
    if args.states:
        round9.TOKENS = round6.TOKENS = PickledStates(args.states)  # type: ignore[assignment]
    if args.stem_boost:
        stem_field(args.stem_boost)
    lexical, semantic = (float(w) for w in args.weights.split(","))
    weights = scoring.Weights(lexical=lexical, semantic=semantic)
    score = scoring.score
    scoring.score = lambda candidates, *, now, weights=weights: score(candidates, now=now, weights=weights)  # type: ignore[assignment]
    name = " ".join(filter(None, ["vectors mpnet" if args.vectors else "", "states mpnet" if args.states else "",
                                  f"stem x{args.stem_boost}" if args.stem_boost else "", f"weights {args.weights}"]))
    return round3.run({name: round9.prescored(100, 0.5)}, args)  # the share round 12 measured at


if __name__ == "__main__":
    sys.exit(main())
