#!/usr/bin/env bash
# Captures real Incus operation and lifecycle events, like ../shared/fixtures/lxd-5.0.2-events.jsonl
# for LXD: one JSON frame a line (as `incus monitor --format=json` prints them) in
# test/fixtures/incus-6.0-events.jsonl, and each action with its time (UTC, HH:MM:SS.ns) in
# test/fixtures/incus-6.0-events.marks.txt. Needs the Incus test bed (scripts/incus-testbed.sh), root.
#
# Usage: bash scripts/capture-incus-events.sh [OUT_PREFIX]   (default test/fixtures/incus-6.0-events)
set -euo pipefail

readonly OUT=${1:-test/fixtures/incus-6.0-events}
readonly SOCKET=/var/lib/incus/unix.socket
readonly A=capture-a B=capture-b
export INCUS_SOCKET=$SOCKET

die() { echo "capture-incus-events: error: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root"
incus query /1.0 >/dev/null || die "no Incus at $SOCKET; run scripts/incus-testbed.sh"

mark() { echo "$(date -u +%H:%M:%S.%N) $1" >>"$OUT.marks.txt"; }
api() { curl -sS --unix-socket "$SOCKET" "$@"; }
init_pid() { incus query "/1.0/instances/$1/state" | jq -r .pid; }
wait_status() {
  local i
  for i in $(seq 100); do [[ $(incus query "/1.0/instances/$1/state" | jq -r .status) == "$2" ]] && return 0; sleep 0.1; done
  die "$1 did not reach $2"
}

for n in "$A" "$A-renamed" "$B"; do incus delete -f "$n" >/dev/null 2>&1 || true; done
: >"$OUT.marks.txt"
incus monitor --type=operation --type=lifecycle --format=json >"$OUT.raw" &
monitor=$!
trap 'kill $monitor 2>/dev/null || true; rm -f "$OUT.raw"' EXIT
sleep 1

mark init; incus init reflex-busybox "$A" -c raw.lxc=lxc.init.cmd=/sbin/testinit </dev/null >/dev/null
mark start; incus start "$A"; sleep 2
mark stop-graceful; incus stop "$A"; sleep 1
mark start2; incus start "$A"; sleep 1
mark stop-force; incus stop -f "$A"; sleep 1
mark start3; incus start "$A"; sleep 1
mark restart-graceful; incus restart "$A"; sleep 1
mark restart-force; incus restart -f "$A"; sleep 2
mark kill9; kill -9 "$(init_pid "$A")"; wait_status "$A" Stopped; sleep 2
mark start4; incus start "$A"; sleep 1
mark guest-poweroff; incus exec "$A" -- poweroff -f </dev/null || true; wait_status "$A" Stopped; sleep 2
mark start5; incus start "$A"; sleep 1
mark guest-reboot; incus exec "$A" -- reboot -f </dev/null || true; sleep 4
mark snap-create; incus snapshot create "$A" s1; sleep 1
mark snap-delete; incus snapshot delete "$A" s1; sleep 1
etag=$(api -i "http://incus/1.0/instances/$A" | awk -F': ' 'tolower($1) == "etag" { gsub("\r", "", $2); print $2 }')
body=$(api "http://incus/1.0/instances/$A" | jq -c '.metadata | {architecture, config, devices, ephemeral, profiles, description}')
mark put-wrong-etag; api -X PUT -H 'If-Match: "0000"' -d "$body" "http://incus/1.0/instances/$A" >/dev/null; sleep 1
mark put-right-etag; api -X PUT -H "If-Match: $etag" -d "$body" "http://incus/1.0/instances/$A" >/dev/null; sleep 2
mark stop-force2; incus stop -f "$A"; sleep 1
mark rename; incus rename "$A" "$A-renamed"; sleep 1
mark delete; incus delete "$A-renamed"; sleep 1
mark init-b; incus init reflex-busybox "$B" -c "raw.lxc=lxc.init.cmd=/bin/sleep 1" </dev/null >/dev/null
mark start-b-init-exits; incus start "$B"; sleep 3
mark delete-b; incus delete -f "$B"; sleep 2

kill "$monitor" 2>/dev/null || true
wait "$monitor" 2>/dev/null || true
jq -c . "$OUT.raw" >"$OUT.jsonl"
echo "captured $(wc -l <"$OUT.jsonl") frames in $OUT.jsonl, actions in $OUT.marks.txt"
