import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  // An instance of an image that carries Python (the test bed's reflex-test-python), and one without.
  sim.controls.addInstance({ name: 'py', status: 'Running', config: { 'image.os': 'busybox', 'image.reflex.python': '/usr/bin/python3' } });
  sim.controls.addInstance({ name: 'plain', status: 'Running' });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const run = async (name: string, command: string[], stdin?: string) =>
  (await client.exec(name, { command }, stdin === undefined ? {} : { stdin })).wait({ timeoutMs: 60_000 });

describe("python3 in a guest whose image carries it (a real CPython over the guest's files)", () => {
  it('runs a script file by path, with its arguments, and sees the guest as its root', async () => {
    const script = [
      'import os, sys, pwd, grp, io, zipfile, tempfile',
      'print(sys.argv)',
      'print(os.getcwd(), pwd.getpwuid(0).pw_dir, grp.getgrgid(0).gr_name)',
      "print(io.open('/etc/passwd').read().strip())",
      "d = tempfile.mkdtemp(dir='/tmp')",
      "z = zipfile.ZipFile(d + '/m.zip', 'w'); z.writestr('guestmod.py', 'X = 42\\n'); z.close()",
      "sys.path.insert(0, d + '/m.zip'); import guestmod; print(guestmod.X)",
      "os.rename(d + '/m.zip', '/root/moved.zip'); print(sorted(os.listdir('/root')), os.path.realpath('/root/moved.zip'))",
    ].join('\n');
    expect(await run('py', ['sh', '-c', `cat > /root/s.py && /usr/bin/python3 /root/s.py a 'b c'`], script)).toMatchObject({
      exitCode: 0,
      stdout: "['/root/s.py', 'a', 'b c']\n/root /root root\nroot:x:0:0:root:/root:/bin/sh\n42\n['moved.zip', 's.py'] /root/moved.zip\n",
      stderr: '',
    });
    // What Python wrote is the guest's: the shell sees it.
    expect((await run('py', ['ls', '/root'])).stdout).toBe('moved.zip\ns.py\n');
    // A guest whose image has no Python has none, by path or by name.
    expect(await run('plain', ['sh', '-c', '/usr/bin/python3 -c "print(1)"'])).toMatchObject({
      exitCode: 127,
      stderr: 'sh: /usr/bin/python3: not found\n',
    });
    for (const name of ['python3', 'python'])
      expect(await run('plain', ['sh', '-c', `${name} -c "print(1)"`]), name).toMatchObject({
        exitCode: 127,
        stderr: `sh: ${name}: not found\n`,
      });
  }, 60_000);

  it("subprocess runs its command in the same guest (stdin, cwd, environment), read with selectors and fcntl's O_NONBLOCK", async () => {
    const code = [
      'import subprocess, selectors, fcntl, os',
      "p = subprocess.Popen(['sh', '-c', 'cat; pwd; echo $GREETING; echo oops >&2; exit 3'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd='/tmp', env={'GREETING': 'hello'})",
      'sel = selectors.DefaultSelector()',
      'sel.register(p.stdout, selectors.EVENT_READ); sel.register(p.stderr, selectors.EVENT_READ)',
      'fcntl.fcntl(p.stdout.fileno(), fcntl.F_SETFL, fcntl.fcntl(p.stdout.fileno(), fcntl.F_GETFL) | os.O_NONBLOCK)',
      "p.stdin.write(b'in\\n'); p.stdin.close()",
      "out = {p.stdout: b'', p.stderr: b''}",
      'while sel.get_map():',
      '    for key, _ in sel.select(1):',
      '        chunk = key.fileobj.read(32768)',
      '        if not chunk: sel.unregister(key.fileobj)',
      '        else: out[key.fileobj] += chunk',
      'print(repr(out[p.stdout]), repr(out[p.stderr]), p.wait())',
      "print(subprocess.run(['echo', 'hi', 'é'], capture_output=True).stdout)",
      "try: subprocess.run(['no-such-program'])",
      'except FileNotFoundError as e: print(e.errno)',
    ].join('\n');
    expect(await run('py', ['python3', '-c', code])).toMatchObject({
      exitCode: 0,
      stdout: "b'in\\n/tmp\\nhello\\n' b'oops\\n' 3\nb'hi \\xc3\\xa9\\n'\n2\n",
      stderr: '',
    });
  }, 60_000);

  it('exits with the code of SystemExit and prints an uncaught exception; a missing script is exit 2', async () => {
    expect(await run('py', ['python3', '-c', 'import sys; sys.exit(4)'])).toMatchObject({ exitCode: 4 });
    // An uncaught exception: its traceback from the program's own frames, as python3 prints it.
    expect(await run('py', ['python3', '-c', 'def f():\n    raise ValueError("boom")\nf()'])).toMatchObject({
      exitCode: 1,
      stderr: 'Traceback (most recent call last):\n  File "<string>", line 3, in <module>\n  File "<string>", line 2, in f\nValueError: boom\n',
    });
    expect(await run('py', ['python3', '/root/missing.py'])).toMatchObject({ exitCode: 2 });
    // Output is byte for byte: no newline added, bytes that are not UTF-8 kept.
    const bytes = await run('py', ['python3', '-c', 'import sys; sys.stdout.write("a"); sys.stdout.flush(); sys.stdout.buffer.write(b"\\xff")']);
    expect({ stdout: bytes.stdout, bytes: bytes.stdoutBytes }).toEqual({ stdout: 'a\ufffd', bytes: 2 });
  }, 60_000);
});
