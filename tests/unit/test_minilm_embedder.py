"""Both MiniLM engines (onnxruntime, numpy) must reproduce sentence-transformers: golden vectors at
1e-5, batching-invariant, and each other."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemo.adapters.local.minilm_embedder import LocalMiniLmEmbedder, onnxruntime_installed
from mnemo.errors import DependencyError

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(os.environ.get("MNEMO_MODEL_DIR") or REPO_ROOT / "models" / "minilm")

if not (MODEL_DIR / "model.safetensors").is_file() or not (MODEL_DIR / "tokenizer.json").is_file():
    pytest.skip(f"MiniLM model not in {MODEL_DIR}: run `make model` or `python scripts/fetch_model.py`",
                allow_module_level=True)


def _golden_path() -> Path:
    """Our own fixture first, so the tests never depend on the design folder beside the repo."""
    candidates = [REPO_ROOT / "tests" / "data" / "minilm-golden.json",
                  REPO_ROOT.parent / "shared" / "design" / "minilm-golden.json"]
    if env := os.environ.get("MNEMO_GOLDEN_PATH"):
        candidates.insert(0, Path(env))
    return next((p for p in candidates if p.is_file()), candidates[0])


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_golden_path().read_text(encoding="utf-8"))
    return data


# No skip when onnxruntime is missing: requirements-dev.txt installs it, and a skip would hide a
# broken engine.
@pytest.fixture(scope="module", params=["numpy", "onnxruntime"])
def embedder(request: pytest.FixtureRequest) -> LocalMiniLmEmbedder:
    embedder = LocalMiniLmEmbedder(MODEL_DIR, batch_size=4, engine=request.param)
    assert embedder._load().engine == request.param
    return embedder


def test_given_golden_texts_when_embedded_then_vectors_match_sentence_transformers(
    embedder: LocalMiniLmEmbedder, golden: dict[str, Any]
) -> None:
    assert golden["model"] == embedder.model_id
    got = np.asarray(embedder.embed(golden["texts"]), dtype=np.float64)
    want = np.asarray(golden["embeddings"], dtype=np.float64)
    assert got.shape == want.shape == (len(golden["texts"]), embedder.dimension)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    cosines = (got * want).sum(axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert cosines.min() > 0.99999


def test_given_a_batch_when_embedded_one_at_a_time_then_same_vectors(
    embedder: LocalMiniLmEmbedder, golden: dict[str, Any]
) -> None:
    batched = np.asarray(embedder.embed(golden["texts"]))
    single = np.asarray([embedder.embed([text])[0] for text in golden["texts"]])
    np.testing.assert_allclose(batched, single, rtol=0, atol=1e-6)


def test_given_texts_of_mixed_lengths_when_embedded_then_order_is_preserved(
    embedder: LocalMiniLmEmbedder, golden: dict[str, Any]
) -> None:
    texts = golden["texts"]
    reordered = [texts[i] for i in (5, 0, 3, 4, 1, 2)]  # long first, so sorting must be undone
    got = np.asarray(embedder.embed(reordered))
    want = np.asarray(golden["embeddings"])[[5, 0, 3, 4, 1, 2]]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_embeddings_are_unit_length(embedder: LocalMiniLmEmbedder, golden: dict[str, Any]) -> None:
    vectors = embedder.embed(golden["texts"] + ["a", "a"])
    assert all(isinstance(x, float) for x in vectors[0])
    np.testing.assert_allclose(np.linalg.norm(np.asarray(vectors), axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors[-1], vectors[-2], rtol=0, atol=1e-6)


def test_given_no_texts_then_no_vectors(embedder: LocalMiniLmEmbedder) -> None:
    assert embedder.embed([]) == []


def test_given_missing_model_when_embedding_then_dependency_error_names_the_fix(tmp_path: Path) -> None:
    lazy = LocalMiniLmEmbedder(tmp_path / "nowhere")  # constructing does no I/O
    assert lazy.embed([]) == []
    with pytest.raises(DependencyError, match="fetch_model.py"):
        lazy.embed(["hello"])


def test_given_corrupt_model_files_when_embedding_then_dependency_error(tmp_path: Path) -> None:
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_bytes(b"not a model")
    with pytest.raises(DependencyError, match="fetch_model.py"):
        LocalMiniLmEmbedder(tmp_path).embed(["hello"])


def test_given_concurrent_first_calls_then_model_loads_once_and_results_agree(
    golden: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from mnemo.adapters.local import minilm_embedder

    loads: list[Path] = []
    real_model = minilm_embedder._MiniLm

    def counting_model(model_dir: Path, *args: Any) -> minilm_embedder._MiniLm:
        loads.append(model_dir)
        return real_model(model_dir, *args)

    monkeypatch.setattr(minilm_embedder, "_MiniLm", counting_model)
    fresh = LocalMiniLmEmbedder(MODEL_DIR)
    with ThreadPoolExecutor(max_workers=4) as pool:
        vectors = list(pool.map(lambda text: fresh.embed([text])[0], golden["texts"][:4]))
    assert len(loads) == 1
    np.testing.assert_allclose(vectors, golden["embeddings"][:4], rtol=0, atol=1e-5)


def test_given_auto_then_onnxruntime_when_installed_and_both_engines_agree(golden: dict[str, Any]) -> None:
    assert onnxruntime_installed()
    auto = LocalMiniLmEmbedder(MODEL_DIR)
    assert auto._load().engine == "onnxruntime"
    texts = golden["texts"] + ["a much longer text " * 80]  # past 256 tokens: both truncate alike
    np.testing.assert_allclose(auto.embed(texts), LocalMiniLmEmbedder(MODEL_DIR, engine="numpy").embed(texts),
                               rtol=0, atol=1e-6)


def test_given_onnxruntime_asked_for_but_missing_then_dependency_error_names_the_fix(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemo.adapters.local import minilm_embedder

    monkeypatch.setattr(minilm_embedder, "onnxruntime_installed", lambda: False)
    with pytest.raises(DependencyError, match="requirements-dev.txt"):
        LocalMiniLmEmbedder(MODEL_DIR, engine="onnxruntime").embed(["hello"])
    # Positive control: auto falls back to numpy with the same module state and still embeds.
    auto = LocalMiniLmEmbedder(MODEL_DIR)
    assert len(auto.embed(["hello"])[0]) == auto.dimension
    assert auto._load().engine == "numpy"


def test_token_states_are_unit_vectors_per_word_piece_without_cls_and_sep_and_both_engines_agree(golden: dict[str, Any]) -> None:
    texts = golden["texts"][:3] + ["", "a much longer text " * 80]
    numpy_states = LocalMiniLmEmbedder(MODEL_DIR, batch_size=2, engine="numpy").token_states(texts)
    onnx = LocalMiniLmEmbedder(MODEL_DIR, engine="onnxruntime")
    onnx_states = onnx.token_states(texts)
    assert [s.tokens for s in numpy_states] == [s.tokens for s in onnx_states]
    assert numpy_states[3].tokens == () and numpy_states[3].vectors.shape == (0, onnx.dimension)
    assert len(numpy_states[4].tokens) == 254  # 256 with [CLS] and [SEP], which are left out
    assert numpy_states[0].tokens == tuple(onnx._load().tokenizer.encode(texts[0]).tokens[1:-1])
    for a, b in zip(numpy_states, onnx_states, strict=True):
        np.testing.assert_allclose(a.vectors, b.vectors, rtol=0, atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(a.vectors, axis=1), 1.0, atol=1e-5)


def test_with_keep_token_states_an_embed_pass_serves_the_next_token_states_call_on_its_thread_once(
    embedder: LocalMiniLmEmbedder, golden: dict[str, Any]
) -> None:
    texts = golden["texts"][:3]
    fresh = embedder.token_states(texts)  # the reference: the model run for them
    keeping = LocalMiniLmEmbedder(MODEL_DIR, batch_size=4, engine=embedder.engine, keep_token_states=True)
    model = keeping._load()
    passes: list[int] = []
    for name in ("forward", "hidden", "both"):
        run = getattr(model, name)
        setattr(model, name, lambda ids, mask, run=run: passes.append(len(ids)) or run(ids, mask))

    vectors = keeping.embed(texts, keep_states=True)
    np.testing.assert_array_equal(vectors, embedder.embed(texts))  # the same vectors as without keeping
    assert sum(passes) == 3  # texts the model ran over
    kept = keeping.token_states([texts[1], texts[0]])
    assert sum(passes) == 3  # no second pass ...
    for got, want in zip(kept, [fresh[1], fresh[0]], strict=True):  # ... and the states a pass of their own gives
        assert got.tokens == want.tokens
        np.testing.assert_allclose(got.vectors, want.vectors, rtol=0, atol=1e-5)
    keeping.token_states([texts[0]])
    assert sum(passes) == 4  # taken once: a second call runs the model ...
    keeping.token_states([texts[2]])
    assert sum(passes) == 4  # ... while the pass's other texts are still there to take

    keeping.embed(texts, keep_states=True)
    other_thread: list[Any] = []
    thread = threading.Thread(target=lambda: other_thread.append(keeping.token_states([texts[0]])))
    thread.start()
    thread.join()
    assert sum(passes) == 8  # another thread (another request) never takes this thread's pass
    keeping.embed(["something else"], keep_states=True)
    keeping.token_states([texts[0]])
    assert sum(passes) == 10  # the next pass replaces it
    keeping.embed(texts)  # not asked to keep (a search that will not rerank): the vector alone, nothing kept
    assert sum(passes) == 13 and not keeping._last_pass.states

    plain = LocalMiniLmEmbedder(MODEL_DIR, engine=embedder.engine)  # the default keeps nothing
    plain.embed(texts)
    assert plain.token_states([texts[0]])[0].tokens == fresh[0].tokens and not plain._last_pass.states
