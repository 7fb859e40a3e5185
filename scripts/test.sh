#!/usr/bin/env bash
# The README's test command: creates .venv if needed, installs evalset with its test dependencies, runs ruff and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check evalset tests scripts
exec .venv/bin/python -m pytest "$@"
