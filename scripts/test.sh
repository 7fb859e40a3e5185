#!/usr/bin/env bash
# The README's test command: creates .venv if needed, installs evalset with its test dependencies and PySpark (the
# `spark` extra: the tests marked `spark` need it, and Java: scripts/install-java.sh), runs ruff and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,spark]'
.venv/bin/ruff check evalset tests scripts
exec .venv/bin/python -m pytest "$@"
