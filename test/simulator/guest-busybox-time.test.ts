import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * `time` is busybox's applet (miscutils/time.c), not a shell keyword, as in ash: its formats, `-o`,
 * the failed command's line and status. Each answer is LXD 5.0.2's (busybox image); the wall clock
 * is read as a figure, not compared.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('tm');
});
afterAll(() => guest.close());

const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';
const usage =
  'Usage: time [-vpa] [-o FILE] PROG ARGS\n\nRun PROG, display resource usage when it exits\n\n' +
  '\t-v\tVerbose\n\t-p\tPOSIX output format\n\t-f FMT\tCustom format\n\t-o FILE\tWrite result to FILE\n\t-a\tAppend (else overwrite)\n';
const clock = '(\\d+m \\d+\\.\\d\\ds)';

describe('time', () => {
  it('prints real, user and sys after the command, on stderr, in busybox format', async () => {
    const r = await guest.sh('echo a | time cat; echo rc=$?');
    expect(r.stdout).toBe('a\nrc=0\n');
    expect(r.stderr).toMatch(new RegExp(`^real\\t${clock}\\nuser\\t0m 0\\.00s\\nsys\\t0m 0\\.00s\\n$`));
  });

  it('says a failed command and exits with its status', async () => {
    const r = await guest.sh('time sh -c "exit 3" 2>&1; echo rc=$?; time -p false 2>&1; echo rc=$?');
    expect(r.stdout).toMatch(
      new RegExp(
        `^Command exited with non-zero status 3\\nreal\\t${clock}\\nuser\\t0m 0\\.00s\\nsys\\t0m 0\\.00s\\nrc=3\\n` +
          `Command exited with non-zero status 1\\nreal \\d+\\.\\d\\d\\nuser 0\\.00\\nsys 0\\.00\\nrc=1\\n$`,
      ),
    );
  });

  it.each([
    ['TIME="%x %C" time sh -c "exit 2" a b 2>&1; echo rc=$?', 'Command exited with non-zero status 2\n2 sh -c exit 2 a b\nrc=2\n', ''],
    ['time -f "a\\tb%%%q" true 2>&1', 'atb\n', ''],
    [
      'time -o /tmp/to -f %x false; echo rc=$?; time -a -o /tmp/to -f "%C" echo hi; cat /tmp/to',
      'rc=1\nhi\nCommand exited with non-zero status 1\n1\necho hi\n',
      '',
    ],
    [
      'time /nosuch 2>&1 | head -2; time -f %x /tmp 2>&1',
      "time: can't execute '/nosuch': No such file or directory\nCommand exited with non-zero status 127\ntime: can't execute '/tmp': Permission denied\nCommand exited with non-zero status 126\n126\n",
      '',
    ],
    ['time -o /nodir/x true; echo rc=$?', 'rc=1\n', "time: can't open '/nodir/x': No such file or directory\n"],
    ['time; echo rc=$?', 'rc=1\n', `${banner}${usage}`],
    ['time --help; echo rc=$?', 'rc=0\n', `${banner}${usage}`],
    ['time -x true; echo rc=$?', 'rc=1\n', `time: invalid option -- 'x'\n${banner}${usage}`],
    ['time -o; echo rc=$?', 'rc=1\n', `time: option requires an argument -- 'o'\n${banner}${usage}`],
    ['type time; x=$(time -f %x echo hi 2>&1); echo "[$x]"', 'time is time\n[hi\n0]\n', ''],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({ stdout, stderr });
  });
});
