#!/usr/bin/env bash
# Print the path of a real Python 3.12 interpreter (the functions' runtime), not a pyenv shim.
for candidate in "${MNEMO_PYTHON312:-}" "$(command -v python3.12 || true)" /root/.pyenv/versions/3.12.*/bin/python3.12 /usr/bin/python3.12; do
  if [[ -n "$candidate" && -x "$candidate" ]] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    exec "$candidate" -c 'import sys; print(sys.executable)'
  fi
done
echo "python3.12 not found: install it (e.g. apt-get install python3.12 or pyenv install 3.12) or set MNEMO_PYTHON312" >&2
exit 1
