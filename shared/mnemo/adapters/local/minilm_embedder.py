"""Local sentence embeddings: all-MiniLM-L6-v2 without torch (multi-GB, too large for Lambda) and
without a model hub at run time.

Two engines run the same forward pass (BERT encoder, mean pooling, L2 normalisation) on the same
weights: onnxruntime where it is installed (requirements-dev.txt: the local stack, tests, benches;
local/minilm_onnx.py), numpy otherwise (requirements.txt alone). Lambda ships neither: it embeds with
Bedrock (layers/deps/requirements.txt). Both reproduce sentence-transformers
to within 1e-6 abs; tests/unit/test_minilm_embedder.py holds each to golden vectors.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from mnemo.errors import DependencyError

Array = npt.NDArray[np.float32]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length (tokenizer.json ships 128)
NUM_LAYERS = 6
NUM_HEADS = 12
LAYER_NORM_EPS = 1e-12
REQUIRED_FILES = ("model.safetensors", "tokenizer.json")

Engine = Literal["auto", "onnxruntime", "numpy"]
Forward = Callable[[npt.NDArray[np.int64], Array], Array]  # (ids, mask) (batch, seq) -> (batch, 384)


@dataclass(frozen=True)
class TokenStates:
    """One text's word pieces and their unit-length contextual vectors (len(tokens), 384)."""

    tokens: tuple[str, ...]
    vectors: npt.NDArray[np.float32]

# erf as a rational function on [-4, 4] (Eigen's float erf; beyond, erf is ±1 in float32):
# GELU abs error < 1.5e-6, float32 rounding level. BERT needs the exact (erf) GELU, not the tanh
# approximation, and np.vectorize(math.erf) is far too slow.
_ERF_NUM = tuple(np.float32(c) for c in (
    -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
    -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02))
_ERF_DEN = tuple(np.float32(c) for c in (
    -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
    -1.42647390514189e-02))
_FFN_ROWS = 256  # tokens per FFN chunk: keeps the (rows, 1536) intermediate in cache


def _polynomial(x2: Array, coefficients: tuple[np.float32, ...]) -> Array:
    """Horner's scheme in place: one temporary, no float64 round trip."""
    acc = x2 * coefficients[0]
    acc += coefficients[1]
    for c in coefficients[2:]:
        acc *= x2
        acc += c
    return acc


def _gelu(x: Array) -> Array:
    """Exact GELU, 0.5·x·(1 + erf(x/√2))."""
    z = x * np.float32(0.7071067811865476)
    np.clip(z, np.float32(-4.0), np.float32(4.0), out=z)
    z2 = z * z
    erf = _polynomial(z2, _ERF_NUM)
    erf *= z
    erf /= _polynomial(z2, _ERF_DEN)
    erf += np.float32(1.0)
    erf *= x
    erf *= np.float32(0.5)
    return erf


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    centred = x - x.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    normed: Array = centred / np.sqrt(var + np.float32(LAYER_NORM_EPS)) * weight + bias
    return normed


@dataclass(frozen=True)
class _Layer:
    """One encoder layer: weights pre-transposed (x @ w copies nothing), q|k|v fused in one GEMM."""

    qkv_w: Array  # (384, 1152)
    qkv_b: Array
    attn_out_w: Array
    attn_out_b: Array
    attn_ln_w: Array
    attn_ln_b: Array
    inter_w: Array
    inter_b: Array
    out_w: Array
    out_b: Array
    out_ln_w: Array
    out_ln_b: Array


def onnxruntime_installed() -> bool:
    """onnxruntime runs the graph, onnx builds it."""
    return all(importlib.util.find_spec(name) for name in ("onnxruntime", "onnx"))


def resolve_engine(engine: Engine) -> Literal["onnxruntime", "numpy"]:
    """auto = onnxruntime when installed, else numpy; an explicit engine must be installed."""
    if engine == "numpy":
        return engine
    if onnxruntime_installed():
        return "onnxruntime"
    if engine == "onnxruntime":
        raise DependencyError("embedder engine onnxruntime is not installed: "
                              "`pip install -r requirements-dev.txt`, or set the engine to numpy or auto")
    return "numpy"


class _MiniLm:
    """The loaded tokenizer and float32 weights, and the forward pass of the chosen engine."""

    def __init__(self, model_dir: Path, engine: Literal["onnxruntime", "numpy"] = "numpy",
                 threads: int | None = 1) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()  # we pad per batch ourselves, after sorting by length
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        # Upcast: a fp16 weights file (the Lambda layer's) works unchanged.
        t = {k: v.astype(np.float32) for k, v in load_file(str(model_dir / "model.safetensors")).items()
             if k != "embeddings.position_ids"}

        self.engine = engine
        if engine == "onnxruntime":
            from mnemo.adapters.local.minilm_onnx import OnnxMiniLm

            onnx = OnnxMiniLm(t, dimension=DIMENSION, layers=NUM_LAYERS, heads=NUM_HEADS, eps=LAYER_NORM_EPS,
                              threads=threads)
            self.forward: Forward = onnx.forward
            self.hidden: Forward = onnx.hidden
            self.both: Callable[[npt.NDArray[np.int64], Array], tuple[Array, Array]] = onnx.both
            return
        self.forward = self._numpy_forward
        self.hidden = self._numpy_hidden
        self.both = self._numpy_both

        def lin(name: str) -> tuple[Array, Array]:
            return np.ascontiguousarray(t[f"{name}.weight"].T), t[f"{name}.bias"]

        self.word = t["embeddings.word_embeddings.weight"]
        self.position = t["embeddings.position_embeddings.weight"]
        self.token_type0 = t["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"]
        self.layers: list[_Layer] = []
        for i in range(NUM_LAYERS):
            p = f"encoder.layer.{i}."
            q, k, v = (lin(f"{p}attention.self.{n}") for n in ("query", "key", "value"))
            scale = np.float32(1.0 / np.sqrt(DIMENSION // NUM_HEADS))
            self.layers.append(_Layer(
                np.ascontiguousarray(np.concatenate([q[0] * scale, k[0], v[0]], axis=1)),
                np.concatenate([q[1] * scale, k[1], v[1]]),
                *lin(f"{p}attention.output.dense"),
                t[f"{p}attention.output.LayerNorm.weight"], t[f"{p}attention.output.LayerNorm.bias"],
                *lin(f"{p}intermediate.dense"), *lin(f"{p}output.dense"),
                t[f"{p}output.LayerNorm.weight"], t[f"{p}output.LayerNorm.bias"],
            ))

    def _numpy_forward(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        """Token ids and attention mask (batch, seq) → unit-length sentence vectors (batch, 384)."""
        return self._numpy_both(ids, mask)[0]

    def _numpy_both(self, ids: npt.NDArray[np.int64], mask: Array) -> tuple[Array, Array]:
        """The sentence vectors and the token states they pool."""
        hidden = self._numpy_hidden(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Array = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit, hidden

    def _numpy_hidden(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        """Token ids and attention mask (batch, seq) → the last layer's token states (batch, seq, 384)."""
        batch, seq = ids.shape
        head_dim = DIMENSION // NUM_HEADS
        # Hidden states stay 2-D (batch·seq, 384): numpy runs a 3-D @ 2-D product as a loop of
        # small GEMMs, about 2x slower than one large GEMM.
        x = (self.word[ids] + self.position[:seq] + self.token_type0).reshape(-1, DIMENSION)
        x = _layer_norm(x, *self.emb_ln)
        # Padding gets the dtype's minimum as score bias, as transformers does: softmax weight 0.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in self.layers:
            qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(batch, seq, 3, NUM_HEADS, head_dim)
            # Contiguous operands: numpy's stacked matmul is ~10x slower on strided views.
            q = np.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3))
            k_t = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            scores = q @ k_t  # already scaled by 1/sqrt(head_dim): folded into the query weights
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(-1, DIMENSION)
            x = _layer_norm(context @ layer.attn_out_w + layer.attn_out_b + x,
                            layer.attn_ln_w, layer.attn_ln_b)
            ffn = np.empty_like(x)
            for start in range(0, x.shape[0], _FFN_ROWS):
                rows = slice(start, start + _FFN_ROWS)
                ffn[rows] = _gelu(x[rows] @ layer.inter_w + layer.inter_b) @ layer.out_w
            ffn += layer.out_b
            ffn += x
            x = _layer_norm(ffn, layer.out_ln_w, layer.out_ln_b)
        hidden: Array = x.reshape(batch, seq, DIMENSION)
        return hidden


# A batch is cut where the next (longer) text would make padding more than this share of its tokens.
# Padded positions cost as much as real ones (attention more), and a search's few texts of mixed
# length in one batch of 32 were mostly padding: a reranker's 21 texts took 2-3x as long.
MAX_PADDING = 0.2


def _padding_bounded(order: list[int], lengths: list[int], batch_size: int) -> Iterator[list[int]]:
    """`order` (positions sorted by token count) cut into batches of at most `batch_size` whose
    padding stays under MAX_PADDING of their tokens (one text always makes a batch)."""
    chunk: list[int] = []
    real = 0
    for i in order:
        padded = (len(chunk) + 1) * lengths[i]  # the batch pads to its last, longest text
        if chunk and (len(chunk) == batch_size or padded - real - lengths[i] > MAX_PADDING * padded):
            yield chunk
            chunk, real = [], 0
        chunk.append(i)
        real += lengths[i]
    if chunk:
        yield chunk


def _states(model: _MiniLm, ids: npt.NDArray[np.int64], mask: Array, hidden: Array) -> TokenStates:
    """One text's tokens (without [CLS] and [SEP]) and their unit-length states, from its row of a batch."""
    n = int(mask.sum())
    states = hidden[1:n - 1]
    states = states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-12)
    tokens = tuple(model.tokenizer.id_to_token(int(t)) or "[UNK]" for t in ids[1:n - 1])
    return TokenStates(tokens, states.astype(np.float32))


def _limit_blas_threads(threads: int) -> None:
    """Size numpy's BLAS thread pool for the whole process (a pool is per process, not per call:
    limiting it around each call would race between the request threads and the worker)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")


class LocalMiniLmEmbedder:
    """`Embedder` port on the local MiniLM model; loads lazily so constructing it costs nothing."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, model_dir: str | Path, batch_size: int = 32, *, blas_threads: int | None = 1,
                 engine: Engine = "auto", keep_token_states: bool = False) -> None:
        """`engine`: onnxruntime runs the pass 1.4-2x faster and outside the GIL, so a busy request
        thread no longer stalls it (a batch of 32 beside a spinning Python thread: 3.8 s on numpy,
        0.23 s on onnxruntime; bench/embedder_bench.py); numpy is the fallback that needs nothing
        beyond requirements.txt.

        `blas_threads`: the process's BLAS thread pool size (and onnxruntime's per-call pool), set
        when the model loads (None leaves it alone). One thread by default: OpenBLAS's worker
        threads spin while they wait, and on a laptop, CI runner or Lambda with 1-2 busy cores a
        one-query forward pass took 86-218 ms with 2 threads against 13-18 ms with one, and a batch
        of 32 texts 1.0-1.7 s against 0.35 s (2-core VM under load; bench/search_latency.py).

        `keep_token_states` (the local reranker's model): `embed(..., keep_states=True)` keeps its
        pass's token states in memory, per thread, until that thread's next `embed`; `token_states` on
        the thread takes a text's states from there (once) instead of running the model again. A search
        that reranks embeds its query and then reranks; enrichment embeds a batch's texts and then
        indexes each memory with its states: one pass each, and only they ask to keep. Only a call on
        the same thread before its next pass can take them (the request that made them: a search, a
        worker batch); nothing is written anywhere."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.blas_threads = blas_threads
        self.engine = engine
        self._model: _MiniLm | None = None
        self._lock = threading.Lock()
        self.keep_token_states = keep_token_states
        self._last_pass = threading.local()  # .states: text -> TokenStates of this thread's last `embed`

    def _load(self) -> _MiniLm:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    missing = [f for f in REQUIRED_FILES if not (self.model_dir / f).is_file()]
                    if missing:
                        raise DependencyError(
                            f"embedding model files missing in {self.model_dir} ({', '.join(missing)}): "
                            "run `make model` or `python scripts/fetch_model.py`")
                    engine = resolve_engine(self.engine)
                    try:
                        if self.blas_threads is not None:
                            _limit_blas_threads(self.blas_threads)
                        self._model = _MiniLm(self.model_dir, engine, self.blas_threads)
                    except Exception as exc:  # corrupt file, missing package: one domain error
                        raise DependencyError(
                            f"cannot load the embedding model from {self.model_dir}: re-run "
                            "`python scripts/fetch_model.py`") from exc
        return self._model

    def embed(self, texts: Sequence[str], *, keep_states: bool = False) -> list[list[float]]:
        """One unit-length vector per text, in order. Texts are batched by token count so each
        batch pads as little as possible; the result does not depend on the batching."""
        if not texts:
            return []
        model = self._load()
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        kept: dict[str, TokenStates] = {}
        for chunk, ids, mask in self._batches(model, texts):
            if self.keep_token_states and keep_states:
                out[chunk], hidden = model.both(ids, mask)
                kept.update((texts[i], _states(model, ids[row], mask[row], hidden[row])) for row, i in enumerate(chunk))
            else:
                out[chunk] = model.forward(ids, mask)
        self._last_pass.states = kept
        return out.tolist()

    def token_states(self, texts: Sequence[str]) -> list[TokenStates]:
        """Each text's tokens (without [CLS] and [SEP]) and their unit-length last-layer states, in
        order: what a late-interaction reranker compares (adapters/local/late_interaction.py)."""
        last: dict[str, TokenStates] = getattr(self._last_pass, "states", {})
        distinct = list(dict.fromkeys(texts))
        found = {t: last.pop(t) for t in distinct if t in last}  # each is taken once
        todo = [t for t in distinct if t not in found]
        if todo:
            model = self._load()
            for chunk, ids, mask in self._batches(model, todo):
                hidden = model.hidden(ids, mask)
                found |= {todo[i]: _states(model, ids[row], mask[row], hidden[row]) for row, i in enumerate(chunk)}
        return [found[t] for t in texts]

    def _batches(self, model: _MiniLm, texts: Sequence[str]) -> Iterator[tuple[list[int], npt.NDArray[np.int64], Array]]:
        """(positions in `texts`, ids, mask) per batch, texts sorted by token count so each batch pads
        as little as possible."""
        # Sequential encode: as fast as encode_batch here (~0.1 ms a text) and it starts no Rayon
        # worker threads to compete with OpenBLAS's for a Lambda's or laptop's few cores.
        token_ids = [model.tokenizer.encode(text).ids for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        for chunk in _padding_bounded(order, [len(ids) for ids in token_ids], self.batch_size):
            seq = len(token_ids[chunk[-1]])
            ids = np.zeros((len(chunk), seq), dtype=np.int64)
            mask = np.zeros((len(chunk), seq), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, :len(token_ids[i])] = token_ids[i]
                mask[row, :len(token_ids[i])] = 1.0
            yield chunk, ids, mask
