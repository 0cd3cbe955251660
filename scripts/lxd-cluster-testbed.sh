#!/usr/bin/env bash
# A real LXD cluster of two members on one machine, beside the main daemon, for the
# cluster tests (test/lxd/lxd-cluster.test.ts). As root, after scripts/lxd-testbed.sh
# (which installs the packages; this script only reuses its image recipe).
#
# Each member is an `lxd` daemon with its own LXD_DIR (/var/lib/lxd-cluster/mN), its own
# network namespace and mount namespace (the recipe of LXD's own test suite,
# test/includes/clustering.sh: a fresh sysfs for the namespace with the host's cgroup tree
# moved under it), one end of a veth pair in the bridge lxdcbr0, address 10.77.0.N.
# Member 1 bootstraps the cluster; the others join with a token (`lxc cluster add`).
# Mounts the members make (shmounts, devlxd, pools) stay in their mount namespace.
#
# Idempotent: `start` brings up what is missing and leaves a working cluster alone;
# `stop` kills the members (and their containers) and removes namespaces, bridge and state.
# The main daemon (/var/lib/lxd) and Incus are never touched.
#
# Usage: bash scripts/lxd-cluster-testbed.sh [start|stop|status|start-member mN]
#   start-member: brings back one member of a cluster already set up (a test killed its daemon),
#   touching nothing else: unlike `start`, it deletes no instance a running test may own.
#   Member 1's socket: /var/lib/lxd-cluster/m1/unix.socket (LXD_DIR=/var/lib/lxd-cluster/m1 lxc …)
set -euo pipefail

readonly BASE=/var/lib/lxd-cluster
readonly BRIDGE=lxdcbr0
readonly BRIDGE_ADDR=10.77.0.254/24
readonly MEMBERS=(m1 m2)
readonly IMAGE_ALIAS=reflex-busybox
readonly IMAGE_REVISION=1
readonly PORT=8443

work=""
# shellcheck source=scripts/testbed-image.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-image.sh"
# shellcheck source=scripts/testbed-process.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed-process.sh"
trap '[[ -z $work ]] || rm -rf "$work"' EXIT

die() { echo "lxd-cluster-testbed: error: $*" >&2; exit 1; }
say() { echo "lxd-cluster-testbed: $*"; }

[[ $(id -u) -eq 0 ]] || die "must run as root"
export HOME="${HOME:-/root}"

index() { echo "${1#m}"; }
member_dir() { echo "$BASE/$1"; }
member_addr() { echo "10.77.0.$(index "$1")"; }
# lxc against one member; LXD_SOCKET wins over the LXD_SOCKET/LXD_DIR of the caller's shell.
mlxc() { local m="$1"; shift; LXD_DIR="$(member_dir "$m")" LXD_SOCKET="$(member_dir "$m")/unix.socket" lxc "$@"; }

pid_of() { cat "$BASE/$1" 2>/dev/null || true; }
# The pid files are checked against the process they name (scripts/testbed-process.sh): a member's
# daemon runs as argv[0] lxd-cluster-mN, a namespace holder as `sleep infinity` in a network
# namespace not the host's. A pid reused by a stranger is neither waited on nor killed.
member_alive() { process_argv0_is "${2:-}" "lxd-cluster-$1"; }
holder_alive() {
  process_argv0_is "${1:-}" sleep && [[ $(readlink "/proc/$1/ns/net") != "$(readlink /proc/self/ns/net)" ]]
}

ensure_bridge() {
  if [[ ! -e /sys/class/net/$BRIDGE ]]; then
    say "creating bridge $BRIDGE ($BRIDGE_ADDR)"
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_ADDR" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
}

# A process holding a new network and mount namespace; its PID is the handle (nsenter -t).
ensure_netns() {
  local m="$1" pid veth_host="vlxdc$(index "$1")" veth_ns="vlxdc$(index "$1")n"
  pid=$(pid_of "$m.ns.pid")
  holder_alive "$pid" && return 0
  say "creating network and mount namespace for $m"
  mkdir -p "$BASE"
  # The member needs a sysfs of its own network namespace (LXD reads /sys/class/net) but the
  # host's cgroup hierarchy (containers' cgroups); the order of mounts below does both.
  setsid unshare -m -n --propagation private /bin/sh -ec '
    mount --move /sys /mnt
    mount -t sysfs sysfs /sys
    mount --move /mnt/fs/cgroup /sys/fs/cgroup
    umount -l /mnt
    exec sleep infinity
  ' </dev/null >/dev/null 2>&1 &
  pid=$!
  echo "$pid" >"$BASE/$m.ns.pid"
  # Wait for the mounts to be done (the namespace's sysfs no longer lists the host's eth0).
  for _ in $(seq 50); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */sleep ]] && break
    sleep 0.1
  done
  holder_alive "$pid" || die "namespace holder for $m died"
  ip link del "$veth_host" 2>/dev/null || true
  ip link add "$veth_host" type veth peer name "$veth_ns"
  ip link set "$veth_ns" netns "$pid"
  ip link set "$veth_host" master "$BRIDGE" up
  nsenter -n -t "$pid" /bin/sh -ec "
    ip link set lo up
    ip link set $veth_ns name eth0
    ip link set eth0 up
    ip addr add $(member_addr "$m")/24 dev eth0
  "
}

member_answers() { timeout 10 env LXD_DIR="$(member_dir "$1")" lxd waitready --timeout=5 >/dev/null 2>&1; }

ensure_daemon() {
  local m="$1" dir pid nspid
  dir=$(member_dir "$m")
  pid=$(pid_of "$m.pid")
  if member_alive "$m" "$pid"; then
    LXD_DIR="$dir" lxd waitready --timeout=60 || die "member $m (pid $pid) does not answer"
    return 0
  fi
  nspid=$(pid_of "$m.ns.pid")
  mkdir -p "$dir"
  chmod 0711 "$dir"
  # A member killed with SIGKILL leaves its socket file, and a process forked from it may still
  # answer on it for a while: lxd would refuse to start ("LXD is already running"). Its daemon is
  # dead (checked above), so the file is stale; the new daemon creates its own.
  rm -f "$dir/unix.socket"
  say "starting member $m (LXD_DIR=$dir, log $dir/lxd.log)"
  # argv[0] is lxd-cluster-mN: scripts/lxd-testbed.sh looks for the main daemon by a command
  # line starting with `lxd`, and must not take a member for it.
  LXD_DIR="$dir" setsid nsenter -n -m -t "$nspid" /bin/bash -c \
    "exec -a lxd-cluster-$m lxd --group root --logfile '$dir/lxd.log'" \
    </dev/null >>"$dir/daemon.out" 2>&1 &
  pid=$!
  echo "$pid" >"$BASE/$m.pid"
  LXD_DIR="$dir" lxd waitready --timeout=60 || { tail -n 20 "$dir/daemon.out" "$dir/lxd.log" >&2; die "member $m did not start"; }
}

clustered() { [[ $(mlxc "$1" query /1.0 2>/dev/null | jq -r '.environment.server_clustered') == true ]]; }

bootstrap() {
  local m=m1
  clustered "$m" && return 0
  say "bootstrapping the cluster on $m"
  mlxc "$m" profile show default >/dev/null
  LXD_DIR="$(member_dir "$m")" lxd init --preseed <<EOF
config:
  core.https_address: $(member_addr "$m"):$PORT
storage_pools:
- name: default
  driver: dir
profiles:
- name: default
  devices:
    root:
      path: /
      pool: default
      type: disk
cluster:
  server_name: $m
  enabled: true
EOF
}

join() {
  local m="$1" token
  clustered "$m" && return 0
  # A join that failed half-way leaves the name in the cluster (pending): drop it first.
  mlxc m1 cluster remove --force --yes "$m" >/dev/null 2>&1 || true
  mlxc m1 cluster revoke-token "$m" >/dev/null 2>&1 || true
  token=$(mlxc m1 cluster add "$m" --quiet)
  say "joining $m to the cluster"
  LXD_DIR="$(member_dir "$m")" lxd init --preseed <<EOF
cluster:
  enabled: true
  server_name: $m
  server_address: $(member_addr "$m"):$PORT
  cluster_token: $token
  member_config:
  - entity: storage-pool
    name: default
    key: source
    value: ""
EOF
}

ensure_image() {
  local fingerprint revision=""
  fingerprint=$(mlxc m1 query "/1.0/images/aliases/$IMAGE_ALIAS" 2>/dev/null | jq -r '.target // empty' || true)
  [[ -n $fingerprint ]] && revision=$(mlxc m1 query "/1.0/images/$fingerprint" | jq -r '.properties["reflex.revision"] // "none"')
  [[ $revision == "$IMAGE_REVISION" ]] && return 0
  [[ -n $revision ]] && mlxc m1 image delete "$IMAGE_ALIAS"
  say "importing image $IMAGE_ALIAS"
  work=$(mktemp -d /tmp/lxd-cluster-image.XXXXXX)
  build_testbed_image "$work" "$IMAGE_REVISION"
  mlxc m1 image import "$work/meta.tar.gz" "$work/rootfs.tar.gz" --alias "$IMAGE_ALIAS" >/dev/null
  rm -rf "$work"
  work=""
}

# Instances a killed test run left (the test names them rc-…).
delete_stale_instances() {
  local name
  for name in $(mlxc m1 query '/1.0/instances' | jq -r '.[] | sub("^/1.0/instances/"; "") | select(startswith("rc-"))'); do
    say "deleting leftover instance $name"
    mlxc m1 delete -f "$name" >/dev/null 2>&1 || true
  done
}

start() {
  command -v lxd >/dev/null || die "lxd is not installed (run scripts/lxd-testbed.sh first)"
  command -v jq >/dev/null || die "jq is not installed (run scripts/lxd-testbed.sh first)"
  ensure_bridge
  local m
  for m in "${MEMBERS[@]}"; do
    ensure_netns "$m"
    ensure_daemon "$m"
  done
  bootstrap
  for m in "${MEMBERS[@]:1}"; do join "$m"; done
  ensure_image
  delete_stale_instances
  echo "lxd cluster test bed ready: members ${MEMBERS[*]}, socket $(member_dir m1)/unix.socket, image $IMAGE_ALIAS"
}

# Containers whose member daemon is gone (killed, or a shutdown that timed out): their
# `[lxc monitor] LXD_DIR/containers NAME` process and everything in their payload cgroup.
kill_orphaned_containers() {
  local dir="$1" pid name procs
  while read -r pid name; do
    [[ -n $pid ]] || continue
    say "killing orphaned container $name (monitor pid $pid)"
    for procs in /sys/fs/cgroup/pids/lxc.payload."$name"/cgroup.procs /sys/fs/cgroup/unified/lxc.payload."$name"/cgroup.procs /sys/fs/cgroup/lxc.payload."$name"/cgroup.procs; do
      [[ -r $procs ]] && xargs -r kill -9 <"$procs" 2>/dev/null || true
    done
    kill -9 "$pid" 2>/dev/null || true
    sleep 0.2
    find /sys/fs/cgroup/*/lxc.payload."$name" /sys/fs/cgroup/*/lxc.monitor."$name" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done < <(pgrep -af "^\[lxc monitor\] $dir/containers " | awk '{print $1, $NF}')
}

stop() {
  local m pid
  # Delete the test instances while the cluster still answers (each member stops its own).
  clustered m1 2>/dev/null && { delete_stale_instances || true; }
  for m in "${MEMBERS[@]}"; do
    pid=$(pid_of "$m.pid")
    if member_alive "$m" "$pid"; then
      say "stopping member $m (pid $pid)"
      LXD_DIR="$(member_dir "$m")" timeout 30 lxd shutdown --timeout 20 >/dev/null 2>&1 || true
      member_alive "$m" "$pid" && kill -9 "$pid" 2>/dev/null || true
    fi
    kill_orphaned_containers "$(member_dir "$m")"
    pid=$(pid_of "$m.ns.pid")
    holder_alive "$pid" && kill -9 "$pid" 2>/dev/null || true
    ip link del "vlxdc$(index "$m")" 2>/dev/null || true
  done
  [[ -e /sys/class/net/$BRIDGE ]] && ip link del "$BRIDGE"
  rm -rf "$BASE"
  say "stopped"
}

start_member() {
  local m="${1:-}"
  [[ " ${MEMBERS[*]} " == *" $m "* ]] || die "start-member: unknown member '$m' (one of ${MEMBERS[*]})"
  [[ -e $BASE/m1/cluster.crt ]] || die "start-member: the cluster is not set up (run start first)"
  ensure_bridge
  ensure_netns "$m"
  ensure_daemon "$m"
}

status() {
  mlxc m1 cluster list --format csv 2>/dev/null || { echo "lxd cluster test bed: not running"; exit 1; }
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  start-member) start_member "${2:-}" ;;
  *) echo "usage: bash scripts/lxd-cluster-testbed.sh [start|stop|status|start-member mN]" >&2; exit 2 ;;
esac
