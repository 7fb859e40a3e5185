#!/usr/bin/env bash
# The README's test command: creates .venv if needed, installs evalset with its test dependencies and PySpark (the
# `spark` extra: the tests marked `spark` need it, and Java: scripts/install-java.sh) and MkDocs (the `docs`
# extra: tests/test_docs_site.py builds the site), runs ruff and pytest.
#   scripts/test.sh [--quick] [PYTEST ARGS]
# --quick: the tests to run after each change, those marked neither `slow` nor `service` (pyproject.toml), on every
# core (pytest-xdist), the property suites on their bounded profile; the whole suite runs in one process (its Label
# Studio and Spark are one per session).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --quick ]; then
  shift
  set -- -m "not slow and not service" -n auto "$@"
  export EVALSET_PROPERTY_PROFILE=quick  # the property suites' bounded profile (tests/conftest.py)
fi
# Bytecode is cached (__pycache__/, ignored by git) even where PYTHONDONTWRITEBYTECODE is set: otherwise every
# test process compiles evalset and the tests again, a third of the quick tier's time.
unset PYTHONDONTWRITEBYTECODE
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The install is editable, so only a changed pyproject.toml needs pip again (a pip run that changes nothing: 10-25 s).
if ! cmp -s pyproject.toml .venv/installed-pyproject.toml; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,spark,docs]'
  cp pyproject.toml .venv/installed-pyproject.toml
fi
.venv/bin/ruff check evalset tests scripts
exec .venv/bin/python -m pytest "$@"
