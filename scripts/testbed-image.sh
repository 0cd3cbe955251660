#!/usr/bin/env bash
# Builds the Reflex test bed image (busybox with /sbin/testinit) as the two tarballs that
# `lxc image import` and `incus image import` both take. Sourced by scripts/lxd-testbed.sh and
# scripts/incus-testbed.sh, so both daemons run the very same image.
#
# build_testbed_image DIR REVISION: writes DIR/meta.tar.gz and DIR/rootfs.tar.gz.
build_testbed_image() {
  local work="$1" revision="$2"
  local rootfs="$work/rootfs"
  mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,dev,proc,sys,tmp,run,root,var/log}
  chmod 1777 "$rootfs/tmp"
  install -m 0755 /bin/busybox "$rootfs/bin/busybox"
  # Every applet at its usual path (bin/sh, bin/sleep, sbin/poweroff, usr/bin/…).
  local applet
  while read -r applet; do
    [[ -n $applet && $applet != bin/busybox && ! -e $rootfs/$applet ]] || continue
    ln -s /bin/busybox "$rootfs/$applet"
  done < <(/bin/busybox --list-full)

  # An init that shuts down cleanly: a graceful stop sends SIGPWR, and a bare `sleep` as PID 1
  # ignores it, leaving `lxc stop` hanging and the instance busy (notes §10).
  cat >"$rootfs/sbin/testinit" <<'INIT'
#!/bin/sh
# Reflex test bed init: exit cleanly on SIGPWR (lxc stop) or SIGTERM, otherwise idle.
trap 'exit 0' PWR TERM
while :; do sleep 1; done
INIT
  chmod 0755 "$rootfs/sbin/testinit"
  echo "root:x:0:0:root:/root:/bin/sh" >"$rootfs/etc/passwd"
  echo "root:x:0:" >"$rootfs/etc/group"

  cat >"$work/metadata.yaml" <<META
architecture: $(uname -m)
creation_date: $(date +%s)
properties:
  architecture: $(uname -m)
  os: busybox
  release: "$(/bin/busybox | head -n1 | awk '{print $2}')"
  description: Reflex test bed (busybox, /sbin/testinit)
  reflex.revision: "$revision"
META
  tar -C "$work" -czf "$work/meta.tar.gz" metadata.yaml
  tar -C "$rootfs" --numeric-owner -czf "$work/rootfs.tar.gz" .
}
