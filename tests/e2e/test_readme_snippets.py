"""README code blocks marked `<!-- runnable ... -->` run as written against the local server."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import LocalServer

pytestmark = pytest.mark.e2e
RUNNABLE = re.compile(r"<!-- runnable[^>]*-->\n```python\n(.*?)```", re.DOTALL)


def test_the_readme_marks_at_least_one_runnable_python_block() -> None:
    assert RUNNABLE.findall((REPO / "README.md").read_text())


@pytest.mark.parametrize("block", RUNNABLE.findall((REPO / "README.md").read_text()))
def test_runnable_python_block_runs_as_a_script(block: str, server: LocalServer, tmp_path) -> None:  # noqa: ANN001
    script = tmp_path / "snippet.py"
    script.write_text(block)
    env = {**os.environ, "MNEMO_URL": server.base, "MNEMO_KEY": server.key}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "'results'" in done.stdout  # it printed the structured result of retrieve_thoughts
