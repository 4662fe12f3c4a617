"""How the local embedder cuts texts sorted by token count into batches: never more than the batch
size, never more padding than MAX_PADDING of a batch's tokens, and no cut that neither rule asks for
(the vectors themselves do not depend on the batching: tests/unit/test_minilm_embedder.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mnemo.adapters.local.minilm_embedder import MAX_PADDING, _padding_bounded


def padding(batch: list[int], lengths: list[int]) -> float:
    padded = len(batch) * max(lengths[i] for i in batch)
    return (padded - sum(lengths[i] for i in batch)) / padded


def test_a_search_of_short_texts_and_one_long_one_does_not_pad_the_short_ones_to_its_length() -> None:
    lengths = [40] * 20 + [256]
    assert list(_padding_bounded(list(range(21)), lengths, 32)) == [list(range(20)), [20]]
    same = [38] * 21
    assert list(_padding_bounded(list(range(21)), same, 8)) == [list(range(8)), list(range(8, 16)), list(range(16, 21))]


@given(st.lists(st.integers(min_value=1, max_value=256), min_size=0, max_size=80), st.integers(min_value=1, max_value=40))
def test_batches_bound_their_size_and_padding_and_cut_only_when_a_bound_asks(lengths: list[int], size: int) -> None:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches = list(_padding_bounded(order, lengths, size))
    assert [i for b in batches for i in b] == order  # every text once, in the sorted order
    for n, batch in enumerate(batches):
        following = batches[n + 1] if n + 1 < len(batches) else []
        assert 1 <= len(batch) <= size
        assert len(batch) == 1 or padding(batch, lengths) <= MAX_PADDING + 1e-9
        if following:  # the cut was needed: the next text would have broken a bound
            assert len(batch) == size or padding(batch + following[:1], lengths) > MAX_PADDING
