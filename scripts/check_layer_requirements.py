"""The deps layer ships the root requirements' pins: nothing drifts, nothing is forgotten.

Every requirement in requirements.txt must appear in layers/deps/requirements*.txt at the same
version, or be named on the layer's `# local-only:` line (deliberately not shipped to Lambda).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "requirements.txt"
LAYER = [REPO / "layers" / "deps" / "requirements.txt", REPO / "layers" / "deps" / "requirements-nodeps.txt"]
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;#]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            found[canonical(match.group(1))] = match.group(3)
        elif line.strip() and not line.lstrip().startswith(("#", "-")):
            sys.exit(f"{path.relative_to(REPO)}: not an exact pin: {line.strip()!r}")
    return found


def main() -> int:
    root = pins(ROOT)
    layer: dict[str, str] = {}
    local_only: set[str] = set()
    for path in LAYER:
        layer.update(pins(path))
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# local-only:"):
                local_only |= {canonical(name) for name in line.split(":", 1)[1].split()}
    problems = []
    for name, version in sorted(root.items()):
        if name in local_only:
            if name in layer:
                problems.append(f"{name} is both local-only and in the layer")
        elif name not in layer:
            problems.append(f"{name}=={version} is in requirements.txt but neither in the layer nor local-only")
        elif layer[name] != version:
            problems.append(f"{name}: requirements.txt pins {version}, the layer {layer[name]}")
    for problem in problems:
        print(f"layer requirements: {problem}", file=sys.stderr)
    if not problems:
        print(
            f"layer requirements agree with requirements.txt ({len(root) - len(local_only)} shipped, "
            f"{len(local_only)} local-only)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
