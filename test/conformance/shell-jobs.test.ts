import { expect, it } from 'vitest';
import { conformance, launchPerSuite, printing, shScripts, type ShScript } from './targets.js';

/**
 * Background jobs (`cmd &`) as busybox ash runs them on the test beds (LXD 5.0.2, Incus 6.0.4):
 * each job a process of its own beside the shell that started it, what it writes coming out as it
 * writes it, `kill`, `wait`, `jobs` and the job table as ash without job control keeps them (issue
 * #41). The cases wait on files the scripts make, not on time, where an order is at stake.
 */
const cases: ShScript[] = [
  // A job runs beside the shell that started it: it waits here for a file the shell makes after it.
  {
    script: 'rm -f /tmp/go; (while [ ! -e /tmp/go ]; do sleep 0.1; done; echo job) & echo parent; touch /tmp/go; wait; echo end',
    stdout: 'parent\njob\nend\n',
    stderr: '',
    exitCode: 0,
  },
  // What a job writes comes out as it writes it, between the shell's own writes.
  {
    script:
      'rm -f /tmp/h1 /tmp/h2; (echo a; touch /tmp/h1; while [ ! -e /tmp/h2 ]; do sleep 0.1; done; echo b >&2; echo c) & while [ ! -e /tmp/h1 ]; do sleep 0.1; done; echo d; touch /tmp/h2; wait; echo e',
    stdout: 'a\nd\nc\ne\n',
    stderr: 'b\n',
    exitCode: 0,
  },
  // A signal ends a running job: `wait PID` is 128 + the signal; `wait` alone is 0. A job's slot is
  // free again once it is done and waited for (`%1`). How it died (`Terminated`, `Killed`) ash says
  // on stderr only when it reaps the job inside that `wait`: in most runs on the beds, not in all
  // (a CI run on Incus 6.0.4 printed `Killed` alone); the simulator says it always, so stderr is not held here.
  {
    script: 'sleep 30 & p=$!; kill $p; wait $p; echo "rc=$?"; sleep 30 & kill -9 $!; wait $!; echo "rc=$?"; sleep 30 & kill %1; wait; echo "rc=$?"',
    stdout: 'rc=143\nrc=137\nrc=0\n',
    exitCode: 0,
  },
  // A job's trap takes the signal, after the command it came during.
  {
    script:
      'rm -f /tmp/ready; (trap \'echo got; exit 5\' TERM; touch /tmp/ready; sleep 2; echo after) & p=$!; while [ ! -e /tmp/ready ]; do sleep 0.1; done; kill $p; wait $p; echo "rc=$?"',
    stdout: 'got\nrc=5\n',
    stderr: '',
    exitCode: 0,
  },
  // `jobs`: the last started first, `+` and `-`, state at column 33, no command text; `-p` the pids, `-l` the pid before the state; a done job is listed once.
  {
    script:
      "sleep 30 & sleep 30 & jobs; jobs -p | wc -l; jobs %1; jobs -l | sed 's/  [0-9][0-9]* / PID /; s/ *$//'; kill %1 %2; wait; jobs; jobs; echo end",
    stdout:
      '[2]+  Running                    \n[1]-  Running                    \n2\n[1]-  Running                    \n[2]+ PID Running\n[1]- PID Running\n[2]+  Terminated                 \n[1]+  Terminated                 \nend\n',
    stderr: '',
    exitCode: 0,
  },
  // Done(N) for a status that is not 0.
  {
    script: '(exit 3) & wait; jobs; jobs; false & wait; true & wait; jobs; echo end',
    stdout: '[1]+  Done(3)                    \n[1]+  Done                       \nend\n',
    stderr: '',
    exitCode: 0,
  },
  // `jobs` refuses an option it has not and a job that is not.
  {
    script: 'sleep 30 & jobs -x; echo "rc=$?"; jobs %4; echo "rc=$?"; kill %1; wait',
    stdout: 'rc=2\nrc=2\n',
    stderr: 'sh: jobs: line 0: illegal option -x\nsh: jobs: line 0: %4: no such job\n',
    exitCode: 0,
  },
  // busybox 1.35's `wait -n` waits for every job and is 0; 127 once the table is empty.
  {
    script: 'sleep 1 & (exit 4) & wait -n; echo "rc=$?"; jobs; wait -n; echo "rc=$?"',
    stdout: 'rc=0\n[2]+  Done(4)                    \n[1]+  Done                       \nrc=127\n',
    stderr: '',
    exitCode: 0,
  },
  // ash reaps a job that has ended when it waits for a program: a signal to it is then no such process; its status stays for `wait`.
  {
    script: 'true & sleep 0.5; kill $! 2>/dev/null; echo "rc=$?"; wait $!; echo "rc=$?"; sleep 30 & kill -0 $!; echo "rc=$?"; kill $!',
    stdout: 'rc=1\nrc=0\nrc=0\n',
    stderr: '',
    exitCode: 0,
  },
  // A command substitution's output is a pipe the job holds: it waits for it.
  { script: 'x=$(sleep 1 & echo a); echo "[$x]"', stdout: '[a]\n', stderr: '', exitCode: 0 },
  // A shell started as a job is its own process beside the shell.
  {
    script: "rm -f /tmp/go2; sh -c 'while [ ! -e /tmp/go2 ]; do sleep 0.1; done; echo inner' & echo outer; touch /tmp/go2; wait; echo end",
    stdout: 'outer\ninner\nend\n',
    stderr: '',
    exitCode: 0,
  },
  // A job's stdin is at its end; its variables and directory stay in it.
  { script: 'cat & read x & wait; echo "[$x] $?"; x=1; (x=2; cd /tmp) & wait; echo "$x $(pwd)"', stdout: '[] 0\n1 /root\n', stderr: '', exitCode: 0 },
  // Jobs run side by side.
  {
    script:
      'rm -f /tmp/n; for i in 1 2 3; do (while [ ! -e /tmp/n ]; do sleep 0.1; done; echo $i >> /tmp/log$i) & done; touch /tmp/n; wait; cat /tmp/log1 /tmp/log2 /tmp/log3; rm -f /tmp/log?',
    stdout: '1\n2\n3\n',
    stderr: '',
    exitCode: 0,
  },
  // What a job writes comes between what the shell wrote before and after, inside a function, a group or a loop too; not into a command substitution or a redirected group the shell is in.
  {
    script: 'main() { rm -f /tmp/o1; echo start; (while [ ! -e /tmp/o1 ]; do sleep 0.1; done; echo job) & touch /tmp/o1; wait; echo end; }; main',
    stdout: 'start\njob\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/o2 /tmp/o3; (while [ ! -e /tmp/o2 ]; do sleep 0.1; done; echo job; touch /tmp/o3) & { echo a; touch /tmp/o2; while [ ! -e /tmp/o3 ]; do sleep 0.1; done; echo b; }; wait',
    stdout: 'a\njob\nb\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'rm -f /tmp/o4; (while [ ! -e /tmp/o4 ]; do sleep 0.1; done; echo job) & x=$(touch /tmp/o4; sleep 1; echo in); echo "[$x]"; wait',
    stdout: 'job\n[in]\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/o5 /tmp/o6; (while [ ! -e /tmp/o5 ]; do sleep 0.1; done; echo job; touch /tmp/o6) & for i in 1 2; do echo $i; touch /tmp/o5; while [ ! -e /tmp/o6 ]; do sleep 0.1; done; done; wait',
    stdout: '1\njob\n2\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/o7 /tmp/o8; (while [ ! -e /tmp/o7 ]; do sleep 0.1; done; echo job; touch /tmp/o8) & { touch /tmp/o7; while [ ! -e /tmp/o8 ]; do sleep 0.1; done; echo redirected; } > /tmp/o9; cat /tmp/o9; wait',
    stdout: 'job\nredirected\n',
    stderr: '',
    exitCode: 0,
  },
  // A job inside a group, function, subshell or `eval` whose redirections send its stdout and stderr to /dev/null (or close them) holds nothing: it runs beside the shell, waiting here for a file the shell makes after it, and what it writes is gone.
  {
    script:
      'rm -f /tmp/g; { (while [ ! -e /tmp/g ]; do sleep 0.1; done; echo out; echo err >&2) & } >/dev/null 2>&1; echo back; touch /tmp/g; wait; echo done',
    stdout: 'back\ndone\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/g; f() { (while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late) & }; f > /dev/null 2>&1; echo back; touch /tmp/g; wait; echo done',
    stdout: 'back\ndone\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'rm -f /tmp/g; ( (while [ ! -e /tmp/g ]; do sleep 0.1; done) & ) > /dev/null 2>&1; echo back; touch /tmp/g',
    stdout: 'back\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "rm -f /tmp/g; eval '(while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late) &' >/dev/null 2>&1; echo back; touch /tmp/g; wait $!; echo rc=$?",
    stdout: 'back\nrc=0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'rm -f /tmp/g; { (while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late) & } >&- 2>&-; echo back; touch /tmp/g; wait; echo done',
    stdout: 'back\ndone\n',
    stderr: '',
    exitCode: 0,
  },
  // Such a job is the shell's: `$!` names it and `kill` reaches it (how it died is not held on stderr, as above).
  {
    script: '{ sleep 30 & } > /dev/null 2>&1; kill $!; wait $!; echo rc=$?',
    stdout: 'rc=143\n',
    exitCode: 0,
  },
  // Guards: a job whose stderr still goes to the exec, into a pipe or a command substitution keeps its output where it goes.
  {
    script: '{ (echo out; echo err >&2) & } > /dev/null; wait; echo done',
    stdout: 'done\n',
    stderr: 'err\n',
    exitCode: 0,
  },
  {
    script: '{ (echo late; echo e >&2) & } 2>&1 >/dev/null | cat; echo back',
    stdout: 'e\nback\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'x=$( { (echo late) & } 2>/dev/null ); echo "x=$x"',
    stdout: 'x=late\n',
    stderr: '',
    exitCode: 0,
  },
  // A shell started inside (`sh -c`, `sh FILE`) ends before its jobs: the shell that started it goes on, and what the
  // jobs write comes out as they write it, after its EXIT trap. Guard: into a pipe, the reader has it all.
  {
    script:
      "rm -f /tmp/g /tmp/h; sh -c '(while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late; touch /tmp/h) & echo early'; echo after; touch /tmp/g; while [ ! -e /tmp/h ]; do sleep 0.1; done; echo end",
    stdout: 'early\nafter\nlate\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/g /tmp/h; sh -c \'trap "echo trap" EXIT; (while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late; touch /tmp/h) & echo early; exit 3\'; echo "after $?"; touch /tmp/g; while [ ! -e /tmp/h ]; do sleep 0.1; done; echo end',
    stdout: 'early\ntrap\nafter 3\nlate\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "rm -f /tmp/g /tmp/h; printf '(while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late; touch /tmp/h) &\\necho early\\n' > /tmp/s2.sh; sh /tmp/s2.sh; echo after; touch /tmp/g; while [ ! -e /tmp/h ]; do sleep 0.1; done; echo end",
    stdout: 'early\nafter\nlate\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "rm -f /tmp/g /tmp/h; f() { sh -c '(while [ ! -e /tmp/g ]; do sleep 0.1; done; echo late; touch /tmp/h) & echo early'; echo infunc; }; f; echo after; touch /tmp/g; while [ ! -e /tmp/h ]; do sleep 0.1; done; echo end",
    stdout: 'early\ninfunc\nafter\nlate\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "sh -c '(echo late) & echo early' | sort; x=$(sh -c '(echo late) & echo early' | sort); echo $x",
    stdout: 'early\nlate\nearly late\n',
    stderr: '',
    exitCode: 0,
  },
  // A job that runs a shell (`sh -c '…' &`) is that shell (ash execs it): a signal to `$!` runs its trap, after the command it
  // came during; one it does not trap ends it (how it died is not held on stderr, as above).
  {
    script:
      'rm -f /tmp/ready /tmp/go; sh -c \'trap "echo got TERM" TERM; touch /tmp/ready; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo after\' & while [ ! -e /tmp/ready ]; do sleep 0.1; done; kill $!; touch /tmp/go; wait $!; echo rc=$?',
    stdout: 'got TERM\nafter\nrc=0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "rm -f /tmp/ready; sh -c 'touch /tmp/ready; sleep 30 >/dev/null 2>&1' & while [ ! -e /tmp/ready ]; do sleep 0.1; done; kill $!; wait $!; echo rc=$?",
    stdout: 'rc=143\n',
    exitCode: 0,
  },
  {
    script:
      'rm -f /tmp/ready /tmp/go; sh -c \'trap "echo got USR1; exit 4" USR1; touch /tmp/ready; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo after\' & while [ ! -e /tmp/ready ]; do sleep 0.1; done; kill -USR1 $!; touch /tmp/go; wait $!; echo rc=$?',
    stdout: 'got USR1\nrc=4\n',
    stderr: '',
    exitCode: 0,
  },
];

/**
 * Incus 6.0.4 waits for a job that holds the exec's stdout, as LXD does, but loses what the job
 * writes after the shell has ended in most runs (recorded here: 12 of 14 runs through its API, 9
 * of 9 through its own `incus exec`); LXD 5.0.2 keeps it.
 */
const incusLosesLateOutput = 'Incus 6.0.4 loses what a job writes after the shell has ended in most runs';

/** The exec ends with the last job that holds its output; the shell's EXIT trap runs as the shell ends, before that. */
const afterTheShell: ShScript[] = [
  {
    script: "trap 'echo trap' EXIT; (sleep 1; echo late) & echo early",
    stdout: 'early\ntrap\nlate\n',
    stderr: '',
    exitCode: 0,
    losesOutput: { target: 'incus', why: incusLosesLateOutput },
  },
  {
    script: '(sleep 1; echo late; exit 4) & exit 3',
    stdout: 'late\n',
    stderr: '',
    exitCode: 3,
    losesOutput: { target: 'incus', why: incusLosesLateOutput },
  },
  {
    script: "sh -c '(sleep 1; echo late) & echo early'; echo after",
    stdout: 'early\nafter\nlate\n',
    stderr: '',
    exitCode: 0,
    losesOutput: { target: 'incus', why: incusLosesLateOutput },
  },
];

await conformance('the guest shell runs background jobs beside itself, with kill, wait and jobs, as busybox sh does', (target) => {
  const name = launchPerSuite(target);
  shScripts(target, name, [...cases, ...afterTheShell]);
  /**
   * `sh -c script` in the suite's instance, expected to print `says` on stdout: a stream the daemon
   * lost under load gets its reruns ({@link printing}; a rerun of an exec that starts a job starts one more).
   */
  const run = (script: string, says: string) =>
    printing(
      target(),
      async () => (await target().client.exec(name(), { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 }),
      says ? ['stdout'] : [],
      says,
    );

  // The ways a script sends a job's output elsewhere: the exec ends at once, the job waits beside it.
  const away: { job: string; says: string }[] = [
    { job: 'JOB >/dev/null 2>&1 & echo started', says: 'started\n' },
    { job: 'JOB &>/dev/null & echo started', says: 'started\n' },
    { job: 'JOB 2>/dev/null >/tmp/rt-out & echo started', says: 'started\n' },
    { job: 'JOB >&- 2>&- & echo started', says: 'started\n' },
    { job: 'exec >/dev/null 2>&1; JOB & echo started', says: '' },
  ];
  for (const { job, says } of away)
    it(`a job started as \`${job}\` leaves the exec to end without it`, async () => {
      // The job's file appears whole (made aside, then renamed), so the later exec never reads it half written.
      const waits = '(while [ ! -e /tmp/rt-go ]; do sleep 0.1; done; echo done > /tmp/rt-done.new; mv /tmp/rt-done.new /tmp/rt-done)';
      expect(await run(`rm -f /tmp/rt-go /tmp/rt-done; ${job.replace('JOB', waits)}`, says)).toMatchObject({ stdout: says, exitCode: 0 });
      expect(await run('touch /tmp/rt-go; while [ ! -e /tmp/rt-done ]; do sleep 0.1; done; cat /tmp/rt-done', 'done\n')).toMatchObject({
        stdout: 'done\n',
        exitCode: 0,
      });
    });

  it("a job an earlier exec left running is init's child in ps, and a later exec stops it by its pid", async () => {
    expect(await run('sleep 30 >/dev/null 2>&1 & echo $! > /tmp/rt-job.pid; echo started', 'started\n')).toMatchObject({
      stdout: 'started\n',
      exitCode: 0,
    });
    const listed = 'p=$(cat /tmp/rt-job.pid); ps -o pid,ppid,args | grep "^ *$p " | sed "s/^ *$p *//"; kill -0 $p && echo alive';
    expect(await run(listed, '1 sleep 30\nalive\n')).toMatchObject({ stdout: '1 sleep 30\nalive\n', exitCode: 0 });
    // A job of this exec gets a pid of its own; both end on the signal (the own one once the shell reaps it).
    const stopped =
      'sleep 30 >/dev/null 2>&1 & q=$!; p=$(cat /tmp/rt-job.pid); [ $q != $p ] && echo distinct; kill $p $q; ' +
      'while kill -0 $p 2>/dev/null || kill -0 $q 2>/dev/null; do sleep 0.1; done; echo gone';
    expect(await run(stopped, 'distinct\ngone\n')).toMatchObject({ stdout: 'distinct\ngone\n', exitCode: 0 });
  });

  it("a job whose output goes elsewhere than the exec's goes on after the exec ends, until the instance stops", async () => {
    const t = target();
    const ticks = 'rm -f /tmp/tick; (while :; do echo t >> /tmp/tick; sleep 0.2; done) >/dev/null 2>&1 & echo started';
    expect(await run(ticks, 'started\n')).toMatchObject({ stdout: 'started\n', exitCode: 0 });
    // A tick after this exec began: the job outlived the one that started it.
    const later = 'n=$(wc -l < /tmp/tick); while [ $(wc -l < /tmp/tick) -le $n ]; do sleep 0.1; done; echo ticking';
    expect(await run(later, 'ticking\n')).toMatchObject({ stdout: 'ticking\n', exitCode: 0 });
    await (await t.client.changeState(name(), { action: 'restart', force: true })).wait({ timeoutMs: 30_000 });
    const still = 'a=$(wc -l < /tmp/tick); sleep 1; b=$(wc -l < /tmp/tick); [ "$a" = "$b" ] && echo stopped';
    expect(await run(still, 'stopped\n')).toMatchObject({ stdout: 'stopped\n', exitCode: 0 });
  });
});
