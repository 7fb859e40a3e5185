#!/usr/bin/env bash
# apt-install.sh WHO PACKAGE...: installs Debian packages for the install-*.sh scripts, as root or through sudo.
# WHO names the calling script in its messages.
set -euo pipefail
who=$1
shift
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "$who: not root and no sudo; install the package(s) $* by hand" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# some packages' post-install scripts expect the man page folder, which slim images leave out
$SUDO mkdir -p /usr/share/man/man1
$SUDO apt-get install -y -qq --no-install-recommends "$@"
