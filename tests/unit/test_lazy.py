"""`adapters.lazy`: a service takes the port, the composition root defers building its adapter."""

from __future__ import annotations

from mnemo.adapters.lazy import lazy
from mnemo.ports import Embedder


class Counting:
    model_id, dimension = "m", 2

    def embed(self, texts: list[str], *, keep_states: bool = False) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_the_stand_in_builds_nothing_until_used_and_asks_at_every_use() -> None:
    built: list[Counting] = []

    def resolve() -> Embedder:
        built.append(Counting())
        return built[-1]

    embedder = lazy(resolve)
    assert built == []  # nothing built by handing it over
    assert embedder.embed(["a"]) == [[1.0, 0.0]] and len(built) == 1  # positive control: the first use builds
    assert embedder.model_id == "m" and len(built) == 2  # no copy kept: the accessor is asked again

