#!/usr/bin/env bash
# Installs Debian's Java 17 runtime (openjdk-17-jre-headless), which Spark needs for `evalset sample --engine spark`
# (and its tests, marked `spark`). Does nothing when a `java` is already on PATH; needs root (or sudo) otherwise.
# On another system, any Java 17 or later will do: set JAVA_HOME or put `java` on PATH.
set -euo pipefail
if command -v java >/dev/null 2>&1; then
  echo "install-java: $(java -version 2>&1 | head -n 1) already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-java: not root and no sudo; install the openjdk-17-jre-headless package by hand" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# the package's post-install script expects its man page folder, which slim images leave out
$SUDO mkdir -p /usr/share/man/man1
$SUDO apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless
java -version 2>&1 | head -n 1
