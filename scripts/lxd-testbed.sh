#!/usr/bin/env bash
# Prepares a real LXD test bed on Debian 12, as root, for the real-LXD test suites.
#
# Idempotent: safe on a fresh machine and on one where an earlier run (or a killed test run)
# left state behind. It installs the packages, starts the daemon when nothing answers, creates
# the `default` dir pool and root disk, imports the `reflex-busybox` image (and
# `reflex-test-python`, the same with the host's python3), and deletes leftover
# `rt-*` test instances. The recipe is §10 of the shared notes (notes/lxd-api-behaviour.md).
#
# Usage: bash scripts/lxd-testbed.sh [--https ADDR:PORT]
#   --https ADDR:PORT   also serve the HTTPS API there (sets core.https_address), for mutual-TLS tests.
set -euo pipefail

readonly IMAGE_ALIAS=reflex-busybox
# Bump when the image recipe below changes: an image carrying another revision is rebuilt.
readonly IMAGE_REVISION=1
# The same image with the host's python3 (Ansible's modules need one): busybox, /sbin/testinit,
# /usr/bin/python3.11 with its shared libraries and standard library. Rebuilt when this recipe's
# revision or the host's Python package changes.
readonly PYTHON_IMAGE_ALIAS=reflex-test-python
readonly PYTHON_IMAGE_RECIPE=1
readonly DAEMON_LOG=/var/log/lxd-testbed.log
readonly SOCKET=/var/lib/lxd/unix.socket
readonly TEST_LOCK=/tmp/reflex-real-lxd.lock
readonly PACKAGES=(lxd busybox-static jq redis-server)

https_address=""
work=""
# shellcheck source=scripts/testbed-image.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-image.sh"
# shellcheck source=scripts/testbed-process.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-process.sh"
trap '[[ -z $work ]] || rm -rf "$work"' EXIT

die() { echo "lxd-testbed: error: $*" >&2; exit 1; }
say() { echo "lxd-testbed: $*"; }

usage() {
  echo "usage: bash scripts/lxd-testbed.sh [--https ADDR:PORT]" >&2
  exit 2
}

while (($#)); do
  case "$1" in
    --https) (($# >= 2)) || usage; https_address="$2"; shift 2 ;;
    --https=*) https_address="${1#--https=}"; shift ;;
    -h|--help) usage ;;
    *) echo "lxd-testbed: unknown argument: $1" >&2; usage ;;
  esac
done

[[ $(id -u) -eq 0 ]] || die "must run as root (LXD's unix socket and container init PIDs need it)"
# lxc keeps its client config under $HOME; CI shells sometimes run without one.
export HOME="${HOME:-/root}"
export DEBIAN_FRONTEND=noninteractive

install_packages() {
  local missing=() pkg
  for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  say "installing ${missing[*]}"
  apt-get update -qq || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# The LXD daemon proper, as opposed to `lxd waitready`, `lxd forkstart` and other subcommands:
# its first argument is an option or nothing.
daemon_pids() {
  pgrep -f -- '^(/usr/bin/|/usr/sbin/)?lxd( -|$)' || true
}

start_daemon() {
  timeout 10 lxc info >/dev/null 2>&1 && return 0

  local pids
  pids=$(daemon_pids)
  if [[ -n $pids ]]; then
    # Still starting (or restarting after a crash): give it the same grace as a fresh start.
    say "lxd is running (pid ${pids//$'\n'/ }) but not answering yet; waiting"
    lxd waitready --timeout=60 \
      || die "lxd (pid ${pids//$'\n'/ }) does not answer on $SOCKET after 60 s; kill it and rerun this script"
    return 0
  fi

  # No systemd here (and the sysvinit script wants the lxd group and lxcfs), so run the daemon
  # directly. setsid detaches it from this script's process group, so it outlives a CI job; it
  # runs from / so it does not hold the caller's folder (a CI clone removed later leaves the daemon
  # without a working directory, and the rsync it runs for snapshots and copies then fails).
  say "starting lxd (log: $DAEMON_LOG)"
  mkdir -p /var/log/lxd
  cd /
  setsid nohup lxd --group root --logfile /var/log/lxd/lxd.log </dev/null >>"$DAEMON_LOG" 2>&1 &
  local pid=$!
  cd "$OLDPWD"
  if ! lxd waitready --timeout=60; then
    kill -0 "$pid" 2>/dev/null && echo "lxd-testbed: lxd (pid $pid) is still running" >&2
    tail -n 20 "$DAEMON_LOG" >&2 || true
    die "lxd did not become ready within 60 s (see $DAEMON_LOG)"
  fi
}

# `lxd init --auto` fails here (it wants a free subnet for a bridge); the tests need no network.
ensure_storage() {
  if ! lxc storage show default >/dev/null 2>&1; then
    say "creating storage pool default (dir)"
    lxc storage create default dir >/dev/null
  fi
  if ! lxc profile device get default root pool >/dev/null 2>&1; then
    say "adding the root disk to the default profile"
    lxc profile device add default root disk path=/ pool=default >/dev/null
  fi
}

image_revision() {
  local alias="${1:-$IMAGE_ALIAS}" fingerprint
  fingerprint=$(lxc query "/1.0/images/aliases/$alias" 2>/dev/null | jq -r '.target // empty') || return 0
  [[ -n $fingerprint ]] || return 0
  lxc query "/1.0/images/$fingerprint" | jq -r '.properties["reflex.revision"] // "none"'
}

build_image() {
  work=$(mktemp -d /tmp/lxd-testbed-image.XXXXXX)
  build_testbed_image "$work" "$IMAGE_REVISION"
  lxc image import "$work/meta.tar.gz" "$work/rootfs.tar.gz" --alias "$IMAGE_ALIAS" >/dev/null
  rm -rf "$work"
}

ensure_image() {
  local revision
  revision=$(image_revision)
  [[ $revision == "$IMAGE_REVISION" ]] && return 0
  if [[ -n $revision ]]; then
    say "replacing image $IMAGE_ALIAS (revision $revision, want $IMAGE_REVISION)"
    lxc image delete "$IMAGE_ALIAS"
  else
    say "building image $IMAGE_ALIAS"
  fi
  build_image
}

# What the Python image is built from: this recipe and the host's python3.11 package.
python_image_revision() {
  echo "$PYTHON_IMAGE_RECIPE-$IMAGE_REVISION-$(dpkg-query -W -f='${Version}' python3.11-minimal 2>/dev/null)"
}

# The busybox image plus the host's python3.11: the interpreter, every shared library it and its
# extension modules load (ldd), and the standard library without tests, IDLE, tkinter, ensurepip,
# lib2to3, pydoc's data, the static build config and byte code: about 15 MB (gzip -1), 7 s.
build_python_image() {
  local revision="$1" rootfs lib
  work=$(mktemp -d /tmp/lxd-testbed-python.XXXXXX)
  build_testbed_image "$work" "$revision"
  rootfs="$work/rootfs"
  install -D -m 0755 /usr/bin/python3.11 "$rootfs/usr/bin/python3.11"
  ln -s python3.11 "$rootfs/usr/bin/python3"
  while read -r lib; do
    [[ -n $lib ]] || continue
    install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
  done < <({ ldd /usr/bin/python3.11; ldd /usr/lib/python3.11/lib-dynload/*.so; } \
             | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u)
  mkdir -p "$rootfs/usr/lib"
  tar -C /usr/lib -cf - --exclude=__pycache__ --exclude=python3.11/test --exclude=python3.11/idlelib \
    --exclude=python3.11/tkinter --exclude=python3.11/ensurepip --exclude=python3.11/lib2to3 \
    --exclude=python3.11/pydoc_data --exclude='python3.11/config-*' --exclude=python3.11/site-packages \
    --exclude=python3.11/dist-packages python3.11 | tar -C "$rootfs/usr/lib" -xf -
  sed -i -e 's|^  description: .*|  description: Reflex test bed (busybox, /sbin/testinit, python3)|' \
    -e '/^  reflex.revision:/a\  reflex.python: /usr/bin/python3' "$work/metadata.yaml"
  tar -C "$work" -czf "$work/meta.tar.gz" metadata.yaml
  tar -C "$rootfs" --numeric-owner -I 'gzip -1' -cf "$work/rootfs.tar.gz" .
  lxc image import "$work/meta.tar.gz" "$work/rootfs.tar.gz" --alias "$PYTHON_IMAGE_ALIAS" >/dev/null
  rm -rf "$work"
}

ensure_python_image() {
  local revision want
  if [[ ! -x /usr/bin/python3.11 ]]; then
    echo "lxd-testbed: warning: no /usr/bin/python3.11 on the host: image $PYTHON_IMAGE_ALIAS not built (the Ansible differential needs it)" >&2
    return 0
  fi
  want=$(python_image_revision)
  revision=$(image_revision "$PYTHON_IMAGE_ALIAS")
  [[ $revision == "$want" ]] && return 0
  if [[ -n $revision ]]; then
    say "replacing image $PYTHON_IMAGE_ALIAS (revision $revision, want $want)"
    lxc image delete "$PYTHON_IMAGE_ALIAS"
  else
    say "building image $PYTHON_IMAGE_ALIAS"
  fi
  build_python_image "$want"
}

# Instances left by a killed test run. A crashed one may briefly be "busy running a stop
# operation", so retry a few times before giving up on it.
delete_stale_instances() {
  local names name attempt holder
  # A test run in progress holds this lock (test/support/daemon-bed.ts); its rt-* instances are live.
  holder=$(cut -d' ' -f1 "$TEST_LOCK" 2>/dev/null || true)
  if lock_holder_alive "$TEST_LOCK"; then
    say "a real-LXD test run (pid $holder) holds $TEST_LOCK; leaving rt-* instances alone"
    return 0
  fi
  names=$(lxc query '/1.0/instances' | jq -r '.[] | sub("^/1.0/instances/"; "") | select(startswith("rt-"))')
  for name in $names; do
    say "deleting leftover instance $name"
    for attempt in 1 2 3 4 5; do
      lxc delete -f "$name" >/dev/null 2>&1 && continue 2
      sleep 1
    done
    echo "lxd-testbed: warning: could not delete leftover instance $name:" >&2
    lxc delete -f "$name" >&2 || true
  done
}

ensure_https() {
  [[ -n $https_address ]] || return 0
  if [[ $(lxc config get core.https_address) != "$https_address" ]]; then
    say "serving the HTTPS API on $https_address"
    lxc config set core.https_address "$https_address"
  fi
}

install_packages
start_daemon
ensure_storage
ensure_image
ensure_python_image
delete_stale_instances
ensure_https

socket_line="socket $SOCKET"
[[ -n $https_address ]] && socket_line+=", https $https_address"
echo "lxd test bed ready: $socket_line, images $IMAGE_ALIAS and $PYTHON_IMAGE_ALIAS"
