#!/usr/bin/env bash
# Prepares a real Incus 6.0 LTS test bed on Debian 12, as root, beside the LXD one.
#
# Idempotent, like scripts/lxd-testbed.sh: it adds the bookworm-backports suite to the system's
# own Debian apt source when no source has it (same URI and keyring; no address is written here),
# installs `incus` from it, starts `incusd` when nothing answers, creates the `default` dir pool
# and root disk, imports the same `reflex-busybox` image as the LXD bed, and deletes leftover
# `rt-*` test instances. The recipe is §12 of the shared notes (notes/lxd-api-behaviour.md).
#
# It creates no network: the test containers need none, and a bridge could collide with LXD's.
#
# Usage: bash scripts/incus-testbed.sh
set -euo pipefail

readonly IMAGE_ALIAS=reflex-busybox
# Bump when scripts/testbed-image.sh changes (the LXD bed has its own counter).
readonly IMAGE_REVISION=1
readonly DAEMON_LOG=/var/log/incus-testbed.log
readonly SOCKET=/var/lib/incus/unix.socket
readonly TEST_LOCK=/tmp/reflex-real-incus.lock
readonly BACKPORTS_LIST=/etc/apt/sources.list.d/reflex-backports.sources
readonly PACKAGES=(busybox-static jq)

work=""
trap '[[ -z $work ]] || rm -rf "$work"' EXIT
# shellcheck source=scripts/testbed-image.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-image.sh"
# shellcheck source=scripts/testbed-process.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-process.sh"

die() { echo "incus-testbed: error: $*" >&2; exit 1; }
say() { echo "incus-testbed: $*"; }

install_only=0
case "${1:-}" in
  "") ;;
  # Only the packages (the `incus` client included), no daemon: CI installs them before the tests
  # that drive the simulator with the `incus` client start, and prepares the daemon beside them.
  --install-only) install_only=1 ;;
  -h|--help) echo "usage: bash scripts/incus-testbed.sh [--install-only]" >&2; exit 2 ;;
  *) echo "incus-testbed: unknown argument: $1" >&2; exit 2 ;;
esac

[[ $(id -u) -eq 0 ]] || die "must run as root (Incus's unix socket and container init PIDs need it)"
export HOME="${HOME:-/root}"
export DEBIAN_FRONTEND=noninteractive
export INCUS_SOCKET=$SOCKET

codename() {
  # shellcheck source=/dev/null
  (. /etc/os-release && echo "${VERSION_CODENAME:-}")
}

# The URI and keyring of the system's own source for the release suite (deb822 or one-line form).
debian_source() {
  local release="$1" file
  for file in /etc/apt/sources.list.d/*.sources; do
    [[ -f $file ]] || continue
    awk -v rel="$release" '
      BEGIN { RS = ""; FS = "\n" }
      {
        uri = ""; key = ""; suites = ""; types = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { uri = $i; sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
          if ($i ~ /^Signed-By:/) { key = $i; sub(/^Signed-By:[ \t]*/, "", key) }
          if ($i ~ /^Suites:/) suites = " " substr($i, 8) " "
          if ($i ~ /^Types:/) types = $i
        }
        if (types ~ /deb( |$)/ && suites ~ (" " rel " ") && uri != "") { print uri "\t" key; exit }
      }' "$file"
  done | head -n1 | grep . && return 0
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $file ]] || continue
    awk -v rel="$release" '$1 == "deb" && $0 !~ /^#/ {
        i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i + 1) == rel) { print $i "\t"; exit }
      }' "$file"
  done | head -n1 | grep .
}

ensure_backports() {
  local release
  release=$(codename)
  [[ -n $release ]] || die "cannot tell the Debian release from /etc/os-release"
  if grep -rqsE "(^|[[:space:]])${release}-backports([[:space:]]|$)" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  local source uri key
  source=$(debian_source "$release") || die "no apt source for $release found to add ${release}-backports to"
  uri=${source%%$'\t'*}
  key=${source#*$'\t'}
  say "adding ${release}-backports from $uri"
  {
    echo "Types: deb"
    echo "URIs: $uri"
    echo "Suites: ${release}-backports"
    echo "Components: main"
    [[ -z $key ]] || echo "Signed-By: $key"
  } >"$BACKPORTS_LIST"
  apt-get update -qq || die "apt-get update failed after adding ${release}-backports"
}

install_packages() {
  local missing=() pkg
  for pkg in "${PACKAGES[@]}" incus; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  ensure_backports
  say "installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends -t "$(codename)-backports" "${missing[@]}" </dev/null \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends -t "$(codename)-backports" "${missing[@]}" </dev/null; } \
    || die "apt-get install ${missing[*]} failed"
}

incusd_path() {
  local path
  for path in /usr/libexec/incus/incusd /usr/lib/incus/incusd /usr/bin/incusd /usr/sbin/incusd; do
    [[ -x $path ]] && { echo "$path"; return 0; }
  done
  command -v incusd || die "incusd not found after installing incus"
}

# The daemon proper, not `incusd forkstart` and other subcommands: its first argument is an option.
daemon_pids() {
  pgrep -f -- '^(/usr/libexec/incus/|/usr/lib/incus/|/usr/s?bin/)?incusd( -|$)' || true
}

start_daemon() {
  timeout 10 incus query /1.0 >/dev/null 2>&1 && return 0

  local pids
  pids=$(daemon_pids)
  if [[ -n $pids ]]; then
    say "incusd is running (pid ${pids//$'\n'/ }) but not answering yet; waiting"
    incus admin waitready --timeout=60 \
      || die "incusd (pid ${pids//$'\n'/ }) does not answer on $SOCKET after 60 s; kill it and rerun this script"
    return 0
  fi

  # No systemd here: run the daemon directly, detached (setsid) so it outlives a CI job.
  local incusd
  incusd=$(incusd_path)
  say "starting $incusd (log: $DAEMON_LOG)"
  mkdir -p /var/log/incus
  cd /  # not the caller's folder: a removed CI clone would leave the daemon without one (lxd-testbed.sh)
  setsid nohup "$incusd" --group root --logfile /var/log/incus/incusd.log </dev/null >>"$DAEMON_LOG" 2>&1 &
  local pid=$!
  cd "$OLDPWD"
  if ! incus admin waitready --timeout=60; then
    kill -0 "$pid" 2>/dev/null && echo "incus-testbed: incusd (pid $pid) is still running" >&2
    tail -n 20 "$DAEMON_LOG" >&2 || true
    die "incusd did not become ready within 60 s (see $DAEMON_LOG)"
  fi
}

# No `incus admin init --auto`: it would add a bridge; the tests need no network.
# Trust tokens need an HTTPS listener (Incus refuses to issue one without core.https_address); loopback
# only, on a port beside LXD's 8443.
ensure_https() {
  if [[ -z $(incus config get core.https_address 2>/dev/null) ]]; then
    say "listening on 127.0.0.1:8444 (core.https_address, for trust tokens)"
    incus config set core.https_address 127.0.0.1:8444 >/dev/null
  fi
}

ensure_storage() {
  if ! incus storage show default >/dev/null 2>&1; then
    say "creating storage pool default (dir)"
    incus storage create default dir >/dev/null
  fi
  if ! incus profile device get default root pool >/dev/null 2>&1; then
    say "adding the root disk to the default profile"
    incus profile device add default root disk path=/ pool=default >/dev/null
  fi
}

image_revision() {
  local fingerprint
  fingerprint=$(incus query "/1.0/images/aliases/$IMAGE_ALIAS" 2>/dev/null | jq -r '.target // empty') || return 0
  [[ -n $fingerprint ]] || return 0
  incus query "/1.0/images/$fingerprint" | jq -r '.properties["reflex.revision"] // "none"'
}

ensure_image() {
  local revision
  revision=$(image_revision)
  [[ $revision == "$IMAGE_REVISION" ]] && return 0
  if [[ -n $revision ]]; then
    say "replacing image $IMAGE_ALIAS (revision $revision, want $IMAGE_REVISION)"
    incus image delete "$IMAGE_ALIAS"
  else
    say "building image $IMAGE_ALIAS"
  fi
  work=$(mktemp -d /tmp/incus-testbed-image.XXXXXX)
  build_testbed_image "$work" "$IMAGE_REVISION"
  incus image import "$work/meta.tar.gz" "$work/rootfs.tar.gz" --alias "$IMAGE_ALIAS" >/dev/null
  rm -rf "$work"
}

delete_stale_instances() {
  local names name attempt holder
  # A test run in progress holds this lock (test/support/daemon-bed.ts); its rt-* instances are live.
  holder=$(cut -d' ' -f1 "$TEST_LOCK" 2>/dev/null || true)
  if lock_holder_alive "$TEST_LOCK"; then
    say "a real-daemon test run (pid $holder) holds $TEST_LOCK; leaving rt-* instances alone"
    return 0
  fi
  names=$(incus query '/1.0/instances?all-projects=true' | jq -r '.[] | sub("^/1.0/instances/"; "") | select(startswith("rt-"))')
  for name in $names; do
    local project=default
    [[ $name == *'?project='* ]] && { project=${name#*\?project=}; name=${name%%\?*}; }
    say "deleting leftover instance $project/$name"
    for attempt in 1 2 3 4 5; do
      incus delete -f "$name" --project "$project" >/dev/null 2>&1 && continue 2
      sleep 1
    done
    echo "incus-testbed: warning: could not delete leftover instance $project/$name:" >&2
    incus delete -f "$name" --project "$project" >&2 || true
  done
}

install_packages
if ((install_only)); then
  say "packages installed: $(incus --version 2>/dev/null || echo '?')"
  exit 0
fi
start_daemon
ensure_storage
ensure_https
ensure_image
delete_stale_instances

echo "incus test bed ready: socket $SOCKET, image $IMAGE_ALIAS, $(incus query /1.0 | jq -r '.environment.server + " " + .environment.server_version')"
