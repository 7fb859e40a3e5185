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
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-chromium: not root and no sudo; install the chromium package by hand" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
chromium --version
