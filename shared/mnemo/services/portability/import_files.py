"""r3 `import_memories source=json_file`: read a JSON file, only from the operator's import directory.

Off unless `MNEMO_IMPORT_DIR` names a folder (`make dev` sets `./imports`). The requested path (relative
to that folder, or absolute) is resolved, symlinks and `..` included, and must land on a regular file
inside it. Every refused path, missing or outside, gets the same message: the answer never tells a
caller which paths exist on the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mnemo.domain.limits import check_json_depth
from mnemo.errors import ValidationFailed

__all__ = ["MAX_FILE_BYTES", "OFF", "REFUSED", "ImportFiles"]

MAX_FILE_BYTES = 5 * 1024 * 1024
OFF = ('file_path: source json_file is off on this server; its operator enables it by setting MNEMO_IMPORT_DIR '
       'to the folder it may read. Send the items inline with source "json" and data instead')
REFUSED = "file_path: no readable JSON file of that name inside the import directory (MNEMO_IMPORT_DIR)"


class ImportFiles:
    def __init__(self, directory: str) -> None:
        self._root = Path(directory).resolve() if directory else None

    def read(self, file_path: str) -> Any:
        if self._root is None:
            raise ValidationFailed(OFF)
        try:
            path = (self._root / file_path).resolve(strict=True)  # an absolute file_path replaces the root
            allowed = path.is_relative_to(self._root) and path.is_file()
        except (OSError, RuntimeError, ValueError):  # missing, a symlink loop, an embedded NUL: all the same answer
            allowed = False
        if not allowed:
            raise ValidationFailed(REFUSED)
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:  # unreadable (permissions, removed since): still no hint of what is there
            raise ValidationFailed(REFUSED) from exc
        if len(data) > MAX_FILE_BYTES:
            raise ValidationFailed(f"file_path: must be at most {MAX_FILE_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed(f"file_path: is not valid JSON ({exc})") from exc
        try:  # bounded before parsing: 10,000 levels were an uncaught RecursionError ("Error executing tool")
            check_json_depth(text)
        except ValueError as exc:
            raise ValidationFailed(f"file_path: the file's JSON {exc}") from None
        try:
            return json.loads(text)
        except ValueError as exc:  # JSONDecodeError, or an integer past Python's 4,300 digits
            raise ValidationFailed(f"file_path: is not valid JSON ({exc})") from exc
