#!/usr/bin/env bash
# Run a local Label Studio server for evalset push / pull and the tests that need one.
#
#   eval "$(scripts/label-studio.sh start --port 8080 --data-dir DIR)"   # exports LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY
#   scripts/label-studio.sh status --data-dir DIR
#   scripts/label-studio.sh stop --data-dir DIR
#   scripts/label-studio.sh add-annotator EMAIL [EMAIL...] --data-dir DIR   # one organization per annotator
#   eval "$(scripts/label-studio.sh start-team EMAIL [EMAIL...] --port 8081 --data-dir DIR)"  # one server each
#
# Label Studio lives in its own virtual environment (it pins its own dependencies), one per pinned version, cached
# in ${EVALSET_CACHE:-$HOME/.cache/evalset}/label-studio-<version>: the first start installs it (a few minutes),
# later starts reuse it. A new data directory gets a copy of a freshly migrated database, empty of users,
# organizations and tokens, kept with the installation ($VENV/evalset-migrated.sqlite3, made once per version by
# the first start that needs it): Label Studio's migrations take a minute or more, a copy a moment. The server listens on 127.0.0.1 unless --host says otherwise (then a warning: others can
# reach it), keeps its sign-up page closed (DISABLE_SIGNUP_WITHOUT_LINK=true; --open-signup opens it), makes no
# version-check call, and gets an admin user
# whose legacy API token is created with the organisation (legacy tokens enabled). The admin's password and token
# are generated on the first start of a data directory and kept in DIR/evalset-admin.env (mode 600).
# `start` prints only the two shell assignments on stdout; progress and errors go to stderr.
# `stop` ends only the process that `start` recorded in DIR/evalset-server.pid.
# `add-annotator` creates each annotator with an organization of their own (blind judging on Label Studio
# Community, docs/labelstudio.md) and records their credentials in DIR/evalset-annotators.tsv (mode 600); it
# prints one line per e-mail and never a password or token. Bad input: one line on stderr, exit 2.
# `start-team` gives each annotator a Label Studio server of their own (blind judging: nothing of one annotator is
# on another's server): DIR/EMAIL is the data directory of EMAIL's server, started on the first free port from
# --port up (a member started before keeps its port), with EMAIL added as its one annotator; the members' rows go
# to DIR/evalset-annotators.tsv (mode 600), and stdout is `export LABEL_STUDIO_ANNOTATORS=...`. `stop` and
# `status` with a team's DIR act on every member. Every server's SECRET_KEY (which signs its session cookies and
# JWTs) is its own, generated in its data directory: a SECRET_KEY in the environment is not passed on.
set -euo pipefail

LS_VERSION=${EVALSET_LABEL_STUDIO_VERSION:-1.23.2}
CACHE=${EVALSET_CACHE:-$HOME/.cache/evalset}
VENV="$CACHE/label-studio-$LS_VERSION"
TEMPLATE="$VENV/evalset-migrated.sqlite3"
PYTHON=${EVALSET_LABEL_STUDIO_PYTHON:-python3}
PORT=8080
HOST=127.0.0.1
SIGNUP=closed
EMAILS=()
DATA_DIR="$CACHE/label-studio-data"
WAIT_S=${EVALSET_LABEL_STUDIO_WAIT_S:-600}

say() { echo "label-studio.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
bad() { say "error: $*"; exit 2; }  # bad input

usage() {
  cat >&2 <<EOF
usage: scripts/label-studio.sh start|stop|status [--port PORT] [--host HOST] [--open-signup] [--data-dir DIR]
       scripts/label-studio.sh add-annotator EMAIL [EMAIL...] --data-dir DIR
       scripts/label-studio.sh start-team EMAIL [EMAIL...] --data-dir DIR [--port FIRST] [--host HOST]
  start   install Label Studio $LS_VERSION if needed, start it on HOST:PORT (default 127.0.0.1:8080) with DIR as its
          data directory, wait for /health, print export LABEL_STUDIO_URL=... and export LABEL_STUDIO_API_KEY=...
          --host 0.0.0.0 (or an address of this machine) lets others reach the server: a warning says so.
          The sign-up page is closed (no account without the admin's invite link) unless --open-signup.
  stop    stop the server started for DIR
  status  say whether the server for DIR is running (exit 0) or not (exit 3)
  add-annotator  create each EMAIL as a user with an organization of their own (no other user sees their
          projects), record e-mail, password and API token in DIR/evalset-annotators.tsv (mode 600); an e-mail
          already there is left unchanged. Needs a data directory a start has initialised.
  start-team  a server of their own for each EMAIL (blind judging, docs/labelstudio.md): DIR/EMAIL its data, the
          first free port from FIRST (default 8080) up, EMAIL its one annotator; prints
          export LABEL_STUDIO_ANNOTATORS=DIR/evalset-annotators.tsv. stop/status --data-dir DIR act on every member.
EOF
  exit 2
}

[ $# -ge 1 ] || usage
COMMAND=$1
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT=${2:?--port needs a value}; shift 2 ;;
    --port=*) PORT=${1#*=}; shift ;;
    --data-dir) DATA_DIR=${2:?--data-dir needs a value}; shift 2 ;;
    --data-dir=*) DATA_DIR=${1#*=}; shift ;;
    --host) HOST=${2:?--host needs a value}; shift 2 ;;
    --host=*) HOST=${1#*=}; shift ;;
    --open-signup) SIGNUP=open; shift ;;
    -h|--help) usage ;;
    -*) say "unknown argument: $1"; usage ;;
    *) [ "$COMMAND" = add-annotator ] || [ "$COMMAND" = start-team ] || { say "unknown argument: $1"; usage; }; EMAILS+=("$1"); shift ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1 ] && [ "$PORT" -le 65535 ] || bad "--port must be 1-65535, got '$PORT'"
[[ "$HOST" =~ ^[A-Za-z0-9.-]+$ ]] || bad "--host must be an IPv4 address or a host name, got '$HOST'"
# Where this machine's clients reach the server: loopback when it listens on every interface.
CONNECT_HOST=$HOST
[ "$HOST" = 0.0.0.0 ] && CONNECT_HOST=127.0.0.1

if [ "$COMMAND" = add-annotator ] || [ "$COMMAND" = start-team ]; then  # checked before anything is installed or read
  [ "${#EMAILS[@]}" -ge 1 ] || bad "$COMMAND needs at least one EMAIL"
  for email in "${EMAILS[@]}"; do
    [[ "$email" =~ ^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$ ]] || bad "not an e-mail address: '$email'"
  done
  [ "$(printf '%s\n' "${EMAILS[@]}" | sort | uniq -d)" = "" ] || bad "an e-mail is given twice"
fi
if [ "$COMMAND" = add-annotator ]; then
  [ -f "$DATA_DIR/label_studio.sqlite3" ] \
    || bad "no Label Studio data in '$DATA_DIR' (no label_studio.sqlite3): start the server once with --data-dir DIR"
fi
[ "$COMMAND" = start ] || [ "$COMMAND" = start-team ] && mkdir -p "$DATA_DIR"
[ -d "$DATA_DIR" ] && DATA_DIR=$(cd "$DATA_DIR" && pwd)
PID_FILE="$DATA_DIR/evalset-server.pid"
PORT_FILE="$DATA_DIR/evalset-server.port"
HOST_FILE="$DATA_DIR/evalset-server.host"
ADMIN_FILE="$DATA_DIR/evalset-admin.env"
LOG_FILE="$DATA_DIR/evalset-server.log"

# The pid recorded by start, if that process is still our Label Studio (a recycled pid is not ours).
running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "label-studio start" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--data-dir $DATA_DIR" || return 1
  echo "$pid"
}

install_label_studio() {
  [ -f "$VENV/.evalset-complete" ] && return 0
  mkdir -p "$CACHE"
  (
    flock 9
    [ -f "$VENV/.evalset-complete" ] && exit 0
    say "installing label-studio==$LS_VERSION into $VENV (first start only, a few minutes)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # pip's notes about configured-but-absent local indexes are noise here; its errors still show.
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "label-studio==$LS_VERSION" 2>&1 \
      | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2 \
      || { rm -rf "$VENV"; exit 1; }
    touch "$VENV/.evalset-complete"
  ) 9>"$CACHE/label-studio-$LS_VERSION.lock" || die "could not install label-studio==$LS_VERSION"
}

# A freshly migrated database in $TEMPLATE, made once (Label Studio's `version` command migrates the database of
# its --data-dir and exits), copied with sqlite's backup, and refused if it holds a user or an organization: every
# data directory started from it gets its admin, organization and token of its own at start.
migrated_database() {
  [ -f "$TEMPLATE" ] && return 0
  (
    flock 9
    [ -f "$TEMPLATE" ] && exit 0
    work=$(mktemp -d "${TMPDIR:-/tmp}/evalset-label-studio-migrate.XXXXXX") || exit 1
    say "migrating a new Label Studio database into $TEMPLATE (once per installed version, a minute or more)"
    env LATEST_VERSION_CHECK=false COLLECT_ANALYTICS=false SENTRY_DSN= FRONTEND_SENTRY_DSN= \
        LABEL_STUDIO_BASE_DATA_DIR="$work" "$VENV/bin/label-studio" version --data-dir "$work" \
        </dev/null >"$work/migrate.log" 2>&1 \
      && "$VENV/bin/python" - "$work/label_studio.sqlite3" "$TEMPLATE.partial" <<'EOF' \
      && mv "$TEMPLATE.partial" "$TEMPLATE"
import sqlite3, sys
source = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
users, = source.execute("SELECT count(*) FROM htx_user").fetchone()
organizations, = source.execute("SELECT count(*) FROM organization").fetchone()
if users or organizations:
    sys.exit(f"the migrated database holds {users} user(s) and {organizations} organization(s), not none")
target = sqlite3.connect(sys.argv[2])
source.backup(target)
target.close()
EOF
    status=$?
    [ "$status" -eq 0 ] || tail -n 20 "$work/migrate.log" >&2
    rm -rf "$work" "$TEMPLATE.partial"
    exit "$status"
  ) 9>"$CACHE/label-studio-$LS_VERSION.lock"
}

port_taken() {  # something listens on HOST:PORT
  "$PYTHON" - "$1" "$2" <<'EOF'
import socket, sys
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no obstacle
try:
    sock.bind((sys.argv[2], int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)
EOF
}

http_status() {  # http_status URL [TOKEN]
  local auth=()
  [ $# -ge 2 ] && auth=(-H "Authorization: Token $2")
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${auth[@]}" "$1" 2>/dev/null || true
}

connect_host() {  # of the running server (a host file from before --host existed means 127.0.0.1)
  local host=127.0.0.1
  [ -f "$HOST_FILE" ] && host=$(cat "$HOST_FILE")
  [ "$host" = 0.0.0.0 ] && host=127.0.0.1
  echo "$host"
}

print_connection() {
  # shellcheck disable=SC1090
  . "$ADMIN_FILE"
  echo "export LABEL_STUDIO_URL=http://$(connect_host):$(cat "$PORT_FILE")"
  echo "export LABEL_STUDIO_API_KEY=$EVALSET_LS_TOKEN"
}

start() {
  if pid=$(running_pid); then
    [ "$(cat "$PORT_FILE")" = "$PORT" ] || die "already running for $DATA_DIR on port $(cat "$PORT_FILE") (pid $pid)"
    local running_host=127.0.0.1
    [ -f "$HOST_FILE" ] && running_host=$(cat "$HOST_FILE")
    [ "$running_host" = "$HOST" ] || die "already running for $DATA_DIR on host $running_host (pid $pid); stop it first"
    say "already running (pid $pid)"
    print_connection
    return 0
  fi
  if [ "$HOST" != 127.0.0.1 ]; then
    say "warning: listening on $HOST: the server is reachable by others on the network, not only from this machine"
    say "warning: anyone who reaches it sees its login page; keep sign-up closed and give accounts with add-annotator"
  fi
  install_label_studio
  if port_taken "$PORT" "$HOST"; then
    die "port $PORT on $HOST is taken; choose another with --port"
  fi
  if [ ! -f "$ADMIN_FILE" ]; then
    (umask 077; {
      echo "EVALSET_LS_EMAIL=admin@evalset.local"
      echo "EVALSET_LS_PASSWORD=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(16))')"
      echo "EVALSET_LS_TOKEN=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(20))')"
    } >"$ADMIN_FILE")
  fi
  if [ ! -f "$DATA_DIR/label_studio.sqlite3" ]; then
    if migrated_database; then
      cp "$TEMPLATE" "$DATA_DIR/label_studio.sqlite3"
    else
      say "warning: no migrated database to copy (above); Label Studio migrates its own at start"
    fi
  fi
  # shellcheck disable=SC1090
  . "$ADMIN_FILE"
  say "starting Label Studio $LS_VERSION on $HOST:$PORT (data: $DATA_DIR; log: $LOG_FILE; sign-up $SIGNUP)"
  local closed=true
  [ "$SIGNUP" = open ] && closed=false
  # Credentials travel in the environment, not on the command line (where ps would show them).
  env -u SECRET_KEY LABEL_STUDIO_USERNAME="$EVALSET_LS_EMAIL" LABEL_STUDIO_PASSWORD="$EVALSET_LS_PASSWORD" \
      LABEL_STUDIO_USER_TOKEN="$EVALSET_LS_TOKEN" LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true \
      LATEST_VERSION_CHECK=false COLLECT_ANALYTICS=false SENTRY_DSN= FRONTEND_SENTRY_DSN= \
      LABEL_STUDIO_BASE_DATA_DIR="$DATA_DIR" DISABLE_SIGNUP_WITHOUT_LINK="$closed" \
      setsid "$VENV/bin/label-studio" start --no-browser --internal-host "$HOST" --port "$PORT" \
      --data-dir "$DATA_DIR" --enable-legacy-api-token </dev/null >"$LOG_FILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  echo "$PORT" >"$PORT_FILE"
  echo "$HOST" >"$HOST_FILE"
  local waited=0
  until [ "$(http_status "http://$CONNECT_HOST:$PORT/health")" = 200 ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$LOG_FILE" >&2 || true
      rm -f "$PID_FILE"
      die "Label Studio exited during start (log above, full log in $LOG_FILE)"
    fi
    # Label Studio moves to the next free port when its port is taken: refuse that instead of following it.
    if grep -q "is in use, trying\|Could not find an available port" "$LOG_FILE" 2>/dev/null; then
      stop_pid "$pid"
      die "Label Studio did not get port $PORT (someone took it during start); nothing is running"
    fi
    [ "$waited" -lt "$WAIT_S" ] || { stop_pid "$pid"; die "no answer on /health after ${WAIT_S}s (log: $LOG_FILE)"; }
    sleep 1
    waited=$((waited + 1))
  done
  if ! grep -q "http://$HOST:$PORT/" "$LOG_FILE"; then
    stop_pid "$pid"
    die "the server that answers on port $PORT is not the one started (see $LOG_FILE); nothing is running"
  fi
  local auth
  auth=$(http_status "http://$CONNECT_HOST:$PORT/api/current-user/whoami" "$EVALSET_LS_TOKEN")
  if [ "$auth" != 200 ]; then
    stop_pid "$pid"
    die "the admin token was refused (HTTP $auth): was $DATA_DIR created without legacy API tokens?"
  fi
  say "ready after ${waited}s (pid $pid)"
  print_connection
}

stop_pid() {
  local pid=$1
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
}

TEAM_FILE="$DATA_DIR/evalset-team.txt"  # start-team's members, one e-mail a line; their servers in DIR/EMAIL

SELF=("bash" "${BASH_SOURCE[0]}")
member_url() {  # a member's server as this machine reaches it
  local host=127.0.0.1
  [ -f "$1/evalset-server.host" ] && host=$(cat "$1/evalset-server.host")
  [ "$host" = 0.0.0.0 ] && host=127.0.0.1
  echo "http://$host:$(cat "$1/evalset-server.port")"
}

# The rss of a server: its process group's (Label Studio's start runs the web server as a child), in MB.
server_megabytes() {
  ps -o rss= -g "$1" 2>/dev/null | awk '{ kb += $1 } END { printf "%d", kb / 1024 }'
}

start_team() {
  install_label_studio
  chmod 700 "$DATA_DIR"
  local port=$PORT email member member_port taken_ports=" " started before after
  for email in "${EMAILS[@]}"; do
    [ -f "$DATA_DIR/$email/evalset-server.port" ] && taken_ports+="$(cat "$DATA_DIR/$email/evalset-server.port") "
  done
  for email in "${EMAILS[@]}"; do
    member="$DATA_DIR/$email"
    if [ -f "$member/evalset-server.port" ]; then
      member_port=$(cat "$member/evalset-server.port")
    else
      while [[ "$taken_ports" == *" $port "* ]] || port_taken "$port" "$HOST"; do
        port=$((port + 1))
        [ "$port" -le 65535 ] || die "no free port from $PORT up"
      done
      member_port=$port
      taken_ports+="$port "
    fi
    before=$(date +%s.%N)
    "${SELF[@]}" start --port "$member_port" --host "$HOST" --data-dir "$member" >/dev/null \
      || die "the server of $email did not start (above); the members started so far keep running (stop --data-dir $DATA_DIR)"
    after=$(date +%s.%N)
    "${SELF[@]}" add-annotator "$email" --data-dir "$member" | { grep -v "^credentials in" || true; } >&2
    [ "${PIPESTATUS[0]}" -eq 0 ] || die "could not add $email to their server (above)"
    grep -qxF "$email" "$TEAM_FILE" 2>/dev/null || echo "$email" >>"$TEAM_FILE"
    started=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.1f", b - a }')
    say "$email: a server of their own, $(member_url "$member"), started in ${started} s, \
$(server_megabytes "$(cat "$member/evalset-server.pid")") MB"
  done
  (umask 077
   printf 'email\tpassword\ttoken\torganization\turl\n' >"$DATA_DIR/evalset-annotators.tsv.partial"
   while read -r email; do
     tail -n +2 "$DATA_DIR/$email/evalset-annotators.tsv"
   done <"$TEAM_FILE" >>"$DATA_DIR/evalset-annotators.tsv.partial"
   mv "$DATA_DIR/evalset-annotators.tsv.partial" "$DATA_DIR/evalset-annotators.tsv")
  say "credentials of $(wc -l <"$TEAM_FILE") annotator(s) in $DATA_DIR/evalset-annotators.tsv (mode 600): hand each \
annotator their e-mail, password and server (cut -f1,2,5 $DATA_DIR/evalset-annotators.tsv)"
  echo "export LABEL_STUDIO_ANNOTATORS=$DATA_DIR/evalset-annotators.tsv"
}

stop() {
  if [ -f "$TEAM_FILE" ] && [ ! -f "$PID_FILE" ]; then
    local email
    while read -r email; do "${SELF[@]}" stop --data-dir "$DATA_DIR/$email" 2>&1 | sed "s/^label-studio.sh: /label-studio.sh: $email: /" >&2; done <"$TEAM_FILE"
    return 0
  fi
  if pid=$(running_pid); then
    stop_pid "$pid"
    say "stopped (pid $pid)"
  else
    rm -f "$PID_FILE"
    say "not running for $DATA_DIR"
  fi
}

status() {
  if [ -f "$TEAM_FILE" ] && [ ! -f "$PID_FILE" ]; then
    local email down=0
    while read -r email; do
      echo -n "$email: "
      "${SELF[@]}" status --data-dir "$DATA_DIR/$email" || down=$((down + 1))
    done <"$TEAM_FILE"
    [ "$down" -eq 0 ] || exit 3
    return 0
  fi
  if pid=$(running_pid); then
    echo "running: pid $pid, http://$(connect_host):$(cat "$PORT_FILE"), data $DATA_DIR"
  else
    echo "not running for $DATA_DIR"
    exit 3
  fi
}

add_annotator() {
  install_label_studio
  local url=""
  [ -f "$PORT_FILE" ] && url="http://$(connect_host):$(cat "$PORT_FILE")"
  # As at start: no version check, no analytics, no Sentry (no network call).
  env LATEST_VERSION_CHECK=false COLLECT_ANALYTICS=false SENTRY_DSN= FRONTEND_SENTRY_DSN= \
      LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true \
      "$VENV/bin/python" "$(dirname "${BASH_SOURCE[0]}")/label_studio_annotators.py" "$DATA_DIR" "$url" "${EMAILS[@]}"
}

case "$COMMAND" in
  start) start ;;
  start-team) start_team ;;
  add-annotator) add_annotator ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
