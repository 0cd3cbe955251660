#!/usr/bin/env bash
# Whether a pid written down earlier is still the process it was. Sourced by the test bed scripts.
#
# A pid alone proves nothing: pid_max is often 32768 and a CI run spawns tens of thousands of
# processes, so once the machine's processes were killed (a new session, a reboot-less restart)
# a stale pid file or lock names some stranger soon enough. `kill -0` would take that stranger for
# a test bed member (then wait 60 s on a daemon that is not there, and fail) or for a test run.

# process_start PID: the process's start time (clock ticks since boot; /proc/PID/stat field 22),
# or nothing when there is no such process or it is a zombie.
process_start() {
  local rest
  rest=$(sed 's/.*) //' "/proc/${1:-x}/stat" 2>/dev/null) || return 0
  [[ -n $rest && ${rest%% *} != Z ]] || return 0
  cut -d' ' -f20 <<<"$rest"
}

# process_argv0_is PID NAME: the process runs and its argv[0] is NAME.
process_argv0_is() {
  local argv0
  [[ -n ${1:-} ]] || return 1
  [[ -n $(process_start "$1") ]] || return 1
  argv0=$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -n 1) || return 1
  [[ $argv0 == "$2" ]]
}

# lock_holder_alive LOCK: the test run that wrote LOCK (test/support/daemon-bed.ts: "PID HOST
# TOKEN START") still runs: the pid is alive, not a zombie, and started when the lock says.
lock_holder_alive() {
  local pid host token start now
  [[ -f $1 ]] || return 1
  read -r pid host token start <"$1" || [[ -n ${pid:-} ]] || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  now=$(process_start "$pid")
  [[ -n $now ]] || return 1
  # A lock written before the start time was kept: the pid is all there is to go on.
  [[ -z ${start:-} || $start == "$now" ]]
}
