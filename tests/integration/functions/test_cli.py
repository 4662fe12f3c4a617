"""The admin CLI builds its own Container from flags + environment, and leaves the environment alone."""

from __future__ import annotations

import os

from mnemo import cli


def test_flags_name_the_tables_without_touching_the_environment(aws, monkeypatch, capsys) -> None:
    monkeypatch.setenv("MNEMO_KEYS_TABLE", "no-such-table")  # the flag must win over this
    before = dict(os.environ)
    assert cli.main(["--keys-table", aws["KeysTable"], "keys", "create", "--tenant", "acme", "--name", "laptop",
                     "--scopes", "memory:read"]) == 0
    assert "created key mn_" in capsys.readouterr().out
    assert cli.main(["--keys-table", aws["KeysTable"], "keys", "list", "--tenant", "acme"]) == 0
    assert "\tlaptop\tmemory:read\t" in capsys.readouterr().out
    assert dict(os.environ) == before
