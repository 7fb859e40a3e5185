#!/usr/bin/env bash
# Installs Debian's Java 17 runtime (openjdk-17-jre-headless), which Spark needs for `evalset sample --engine spark`
# (and its tests, marked `spark`). Does nothing when a `java` is already on PATH; needs root (or sudo) otherwise.
# On another system, any Java 17 or later will do: set JAVA_HOME or put `java` on PATH.
set -euo pipefail
if command -v java >/dev/null 2>&1; then
  echo "install-java: $(java -version 2>&1 | head -n 1) already installed"
  exit 0
fi
bash "$(dirname "$0")/apt-install.sh" install-java openjdk-17-jre-headless
java -version 2>&1 | head -n 1
