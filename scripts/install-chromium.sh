#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test of the HTML report (tests/report/test_report_browser.py).
# Does nothing when a Chromium is already on PATH; needs root (or sudo) otherwise.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    echo "install-chromium: $("$name" --version 2>/dev/null || echo "$name") already installed"
    exit 0
  fi
done
bash "$(dirname "$0")/apt-install.sh" install-chromium chromium
chromium --version
