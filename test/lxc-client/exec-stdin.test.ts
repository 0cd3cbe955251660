import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, incusBed, lxdBed } from '../support/daemon-bed.js';
import { until } from '../support/wait.js';
import { describeLxcClient, lxcOnBed, startSimRemote, wholeOutput, type SimRemote } from './sim-remote.js';

let t: SimRemote;

/**
 * `lxc exec` without a terminal, its stdin a pipe that brings a script line by line: the real
 * daemons (LXD 5.0.2, Incus 6.0.4, by hand on the test beds) run every line, `a b` and exit 3; the
 * simulator ran the shell a second after the sockets connected with the first line only (`a`, 0).
 * Issue #41 item 4.
 */
function execFedSlowly(t: SimRemote, lines: string[], gapMs: number): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = t.lxc.spawn(['exec', 'sim:c1', '--', 'sh']);
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, code: code ?? -1 }));
    const feed = (i: number): void => {
      if (i === lines.length) return void child.stdin.end();
      child.stdin.write(lines[i]);
      setTimeout(() => feed(i + 1), gapMs);
    };
    feed(0);
  });
}

describeLxcClient('lxc exec with stdin fed over time', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => t?.close());

  it('runs every line a pipe brings before it ends, as the daemons do: a b, exit 3', async () => {
    expect(await execFedSlowly(t, ['echo a\n', 'echo b; exit 3\n'], 1_500)).toEqual({ stdout: 'a\nb\n', code: 3 });
  }, 30_000);
});

/** One turn of a conversation: what is written to the shell's stdin, and the output it waits for before the next turn (none: it goes on at once). */
interface Turn {
  send: string;
  answer?: string;
}

/**
 * A client that talks with `lxc exec c -- sh` over a pipe: it writes a line, waits for the answer,
 * then writes the next (an `expect`-style script, a coprocess). busybox's ash reads its stdin as
 * it comes and runs each command once its line is whole, so each answer comes before the next
 * line is sent; a shell that waited for the end of its stdin would never answer. What each turn
 * waited for, then the rest and the exit code once stdin is closed.
 */
async function converse(
  remote: SimRemote,
  target: string,
  turns: Turn[],
  /** The shell ends by itself after the last turn: stdin is closed only once the client has ended. */
  endsItself = false,
): Promise<{ answers: string[]; stdout: string; stderr: string; code: number }> {
  const child = remote.lxc.spawn(['exec', target, '--', 'sh']);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  let exited: number | undefined;
  const closed = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve((exited = code ?? -1)));
  });
  const answers: string[] = [];
  try {
    for (const turn of turns) {
      const from = stdout.length;
      child.stdin.write(turn.send);
      if (turn.answer === undefined) continue;
      await until(
        `the answer to ${JSON.stringify(turn.send)}`,
        async () => (stdout.length - from >= turn.answer!.length ? true : undefined),
        10_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; came: ${JSON.stringify(stdout.slice(from))}, stderr: ${JSON.stringify(stderr)}`);
      });
      answers.push(stdout.slice(from));
    }
    if (endsItself) await until('the shell to end with its stdin open', async () => exited, 10_000);
  } finally {
    child.stdin.end();
  }
  const code = await closed;
  return { answers, stdout, stderr, code };
}

/** A conversation: variables, a function and the directory kept between turns, an `if` and a here-document over several writes, a message, the EXIT trap at `exit 3`. */
const conversation: Turn[] = [
  { send: 'echo a\n', answer: 'a\n' },
  { send: 'x=kept; f() { echo "f:$1:$x"; }; echo defined\n', answer: 'defined\n' },
  { send: 'f one\n', answer: 'f:one:kept\n' },
  { send: 'if true; then\n' },
  { send: '  echo in-if\n' },
  { send: 'fi\n', answer: 'in-if\n' },
  { send: 'cat <<EOF\n' },
  { send: 'hello $x\n' },
  { send: 'EOF\n', answer: 'hello kept\n' },
  { send: "trap 'echo bye' EXIT; cd /tmp; nosuch 2>&1; pwd\n", answer: 'sh: nosuch: not found\n/tmp\n' },
  { send: 'echo $((1 + 2)) >&2; echo err-sent\n', answer: 'err-sent\n' },
  { send: 'exit 3\n', answer: 'bye\n' },
];

const conversed = {
  answers: ['a\n', 'defined\n', 'f:one:kept\n', 'in-if\n', 'hello kept\n', 'sh: nosuch: not found\n/tmp\n', 'err-sent\n', 'bye\n'],
  stdout: 'a\ndefined\nf:one:kept\nin-if\nhello kept\nsh: nosuch: not found\n/tmp\nerr-sent\nbye\n',
  stderr: '3\n',
  code: 3,
};

/** Ended by its stdin's end: the status of its last command. */
const toTheEnd: Turn[] = [{ send: 'echo a\n', answer: 'a\n' }, { send: 'false\n' }];
const endedWithLast = { answers: ['a\n'], stdout: 'a\n', stderr: '', code: 1 };

/** A syntax error no later line mends ends the shell at once, its stdin still open, after the commands before it ran: 2. */
const syntaxError: Turn[] = [{ send: 'echo a\n', answer: 'a\n' }, { send: 'echo b\nfi\necho c\n' }];
const endedBySyntax = { answers: ['a\n'], stdout: 'a\nb\n', stderr: 'sh: syntax error: unexpected "fi"\n', code: 2 };

/** The conversations, each held to the simulator and a real daemon. */
const talks = [
  { name: 'answers each command as its line comes, keeping the shell between turns', turns: conversation, endsItself: false, expected: conversed },
  { name: 'ends with its last command’s status when stdin ends', turns: toTheEnd, endsItself: false, expected: endedWithLast },
  { name: 'ends at a syntax error, in ash’s words, before its stdin ends', turns: syntaxError, endsItself: true, expected: endedBySyntax },
];

/**
 * A script piped whole (it fits in ash's first read of its stdin, 1023 bytes): the shell has read
 * all of stdin before its first command runs, so its `read` finds the end (status 1) and `cat` and
 * `head` nothing, and the line after `read` runs as a command.
 */
const pipedWhole = 'read a; echo "rc=$? [$a]"\nfoo\necho "[$a]"\ncat\nhead -1\necho end\n';

/** The sessions, on the simulator or (`real`) a daemon, whose output streams can close before their end (wholeOutput). */
function conversations(on: { remote: () => SimRemote; target: () => string }, real = false): void {
  for (const talk of talks)
    it(
      talk.name,
      async () => {
        expect(await converse(on.remote(), on.target(), talk.turns, talk.endsItself)).toEqual(talk.expected);
      },
      60_000,
    );
  it('leaves a script piped whole nothing to read: its read finds the end, cat and head nothing', async () => {
    const expected = { stdout: 'rc=1 []\n[]\nend\n', stderr: 'sh: foo: not found\n' };
    const run = () => on.remote().lxc.run(['exec', on.target(), '--', 'sh'], { input: pipedWhole, timeoutMs: 30_000 });
    expect(await (real ? wholeOutput(run, expected) : run())).toMatchObject({ ...expected, code: 0 });
  }, 60_000);
}

describeLxcClient('lxc exec -- sh over a pipe, answering each line before the next is sent, on the simulator', () => {
  let sim: SimRemote;
  beforeAll(async () => {
    sim = await startSimRemote({ trustPassword: 's3cret' });
    await sim.lxc.ok(['remote', 'add', 'sim', sim.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    sim.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => sim?.close());
  conversations({ remote: () => sim, target: () => 'sim:c1' });
});

await describeBed(lxdBed, 'lxc exec -- sh over a pipe, answering each line before the next is sent, on LXD 5.0.2', () => {
  conversations(lxcOnBed(), true);
});

await describeBed(
  incusBed,
  'incus exec -- sh over a pipe, answering each line before the next is sent, on the later revision of the simulator',
  () => {
    let sim: SimRemote;
    beforeAll(async () => {
      sim = await startSimRemote({ revision: 'later' }, 'incus');
      await sim.lxc.ok(['remote', 'add', 'sim', sim.sim.controls.issueToken('exec-stdin')]);
      sim.sim.controls.addInstance({ name: 'c1' });
    });
    afterAll(async () => sim?.close());
    conversations({ remote: () => sim, target: () => 'sim:c1' });
  },
);

await describeBed(incusBed, 'incus exec -- sh over a pipe, answering each line before the next is sent, on Incus 6.0', () => {
  conversations(lxcOnBed('incus'), true);
});
