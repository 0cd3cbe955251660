import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { INCUS_SOCKET, lxdSocketPath } from '../support/daemon-bed.js';
import type { LxcResult } from '../support/lxc-cli.js';
import { normaliseOutput } from './normalise.js';
import type { SimRemote } from './sim-remote.js';

/**
 * The `lxc` commands the differential suite runs, in order, against the real daemon and against
 * the simulator. `R:` stands for the remote; `{n}` for the test's instance name (an `rt-` name, so
 * the test bed's cleanup knows it), `{copy}` and `{launched}` for the two others it makes. The
 * daemon side must have the test bed's `reflex-busybox` image; the simulator has the same alias.
 */
export interface ScenarioStep {
  /** lxc arguments with placeholders. */
  args: string[];
  /**
   * The `incus` client's arguments where they differ by design (`incus snapshot create`, …), or
   * false where the step is not part of the `incus` run. Default: {@link args}.
   */
  incus?: string[] | false;
  /** Only this client's run has the step (a check the other suite does not make). Default: both. */
  only?: Client;
  /** Drops lines that depend on what else lives on the host (other instances, warnings). */
  keepLines?: (line: string, names: Names) => boolean;
  /** Further normalisation of this step's output, for what depends on the rest of the host. */
  transform?: (text: string) => string;
  /** What the client reads on stdin (`file edit` takes the new content there). Default: nothing. */
  input?: string;
  /** The step writes to the local directory `{local}`: its files and their contents are compared too. */
  localTree?: boolean;
  /**
   * The program the step runs: the suite's client (default), or `curl` for a request no client sends
   * as it is. A curl argument's leading `R:` is the remote's base URL, reached as the client reaches
   * it (the real daemon's unix socket; the simulator's HTTPS address with the client's certificate).
   * In any later step, `{.a.b}` is the field `a.b` of the JSON the last curl step printed.
   */
  program?: 'curl';
}

/** The client binary a differential suite drives. */
export type Client = 'lxc' | 'incus';

/** The instance names of one run. */
export interface Names {
  n: string;
  copy: string;
  launched: string;
}

const init = ['-c', 'raw.lxc=lxc.init.cmd=/sbin/testinit'];

/** The "used by" count of a CSV row counts everything on the host, other suites' instances included. */
const usedByCount = (text: string): string => text.replace(/,\d+$/gm, ',<count>');

/** An image's size in an operation's metadata (a string): the tarballs of the daemon's and the simulator's files differ by nature. */
const imageSize = (text: string): string => text.replace(/"size": "\d+"/g, '"size": "<n>"');

/** `image info` prints the image's properties in Go's map order, which changes from run to run: in name order here. */
const sortedProperties = (text: string): string =>
  text.replace(/^(Properties:\n)((?: {4}.*\n)*)/m, (_, head: string, lines: string) =>
    lines ? `${head}${lines.split('\n').filter(Boolean).sort().join('\n')}\n` : head,
  );

/** The liblxc log itself is the host's (its warnings, timestamps); what precedes it is compared. */
const withoutLogLines = (text: string): string => text.replace(/\nLog:\n[\s\S]*$/, '\nLog:\n<log>\n');

/**
 * The guest shell's own "not found" line: the real client sometimes exits on the command's status
 * before the guest's stderr has reached it (a clean-clone CI run on Incus 6.0 printed only "Error:
 * Command not found" once, with it the run before). The rest is compared; exec.test.ts holds the
 * simulator to the whole stderr.
 */
const withoutShellNotFound = (text: string): string => text.replace(/^sh: nosuchcmd: not found\n/m, '');

/** Lines naming instances other than this run's (leftovers of other suites on the shared daemon). */
const onlyOurInstances = (line: string, names: Names): boolean => {
  const m = /(?:\/1\.0\/instances\/|^\s*- )(rt-[a-z0-9-]+)/.exec(line);
  return !m || Object.values(names).includes(m[1]!);
};

/** Shell cases of issue #28 (finding 1), as `exec` arguments after the instance. */
const shellCases: string[][] = [
  ['--env', 'FOO=bar', '--', 'sh', '-c', 'echo $FOO'],
  ['--', 'sh', '-c', 'echo a | cat'],
  ['--', 'sh', '-c', 'echo hi > /tmp/f; cat /tmp/f'],
  ['--env', 'FOO=bar', '--', 'sh', '-c', 'env | grep ^FOO='],
  ['--', 'sh', '-c', 'for i in 1 2 3; do echo $i; done'],
  ['--', 'sh', '-c', 'test -d /tmp && echo dir; test -f /nonexistent; echo $?'],
  ['--', 'sh', '-c', 'printf "%s-%d\\n" a 1'],
  ['--', 'sh', '-c', 'x=0; while [ $x -lt 3 ]; do x=$((x+1)); done; echo $x'],
  ['--cwd', '/tmp', '--', 'pwd'],
  ['--', 'cat', '/etc/hostname'],
  ['--', 'sh', '-c', 'exit 42'],
];

/**
 * File transfer: lxc 5.0.2 goes through the files API and sends the instance's path without its
 * leading slash (`path=etc/passwd`), which the daemon resolves from `/` (issue #41 item 1); the
 * `incus` 6.0.4 client speaks SFTP on `GET /1.0/instances/NAME/sftp` upgraded (item 2), with the
 * same relative paths for delete. `{local}` is a directory of the run's own on the host.
 */
const fileSteps: ScenarioStep[] = [
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'mkdir -p /tmp/d/sub; echo one > /tmp/d/a; echo two > /tmp/d/sub/b'] },
  { args: ['file', 'pull', 'R:{n}/etc/passwd', '-'] },
  { args: ['file', 'pull', 'R:{n}/tmp/d/a', '{local}/a'], localTree: true },
  { args: ['file', 'pull', '-r', 'R:{n}/tmp/d', '{local}'], localTree: true },
  { args: ['file', 'pull', 'R:{n}/tmp/nosuch', '-'] },
  { args: ['file', 'push', '{local}/a', 'R:{n}/tmp/d/c'] },
  { args: ['file', 'pull', 'R:{n}/tmp/d/c', '-'] },
  { args: ['file', 'push', '{local}/a', 'R:{n}/tmp/nodir/x'] },
  { args: ['file', 'push', '-p', '{local}/a', 'R:{n}/tmp/p1/p2/x'] },
  { args: ['exec', 'R:{n}', '--', 'stat', '-c', '%a %n', '/tmp/p1', '/tmp/p1/p2', '/tmp/p1/p2/x'] },
  { args: ['file', 'push', '--uid', '33', '--gid', '34', '--mode', '0640', '{local}/a', 'R:{n}/tmp/owned'] },
  { args: ['exec', 'R:{n}', '--', 'stat', '-c', '%u %g %U %G %a %n', '/tmp/owned', '/etc/passwd', '/tmp'] },
  { args: ['exec', 'R:{n}', '--', 'stat', '-c', '%u', '/nosuch'] },
  { args: ['file', 'edit', 'R:{n}/tmp/d/a'], input: 'edited\n' },
  { args: ['exec', 'R:{n}', '--', 'cat', '/tmp/d/a'] },
  { args: ['file', 'delete', 'R:{n}/tmp/d/c'] },
  { args: ['file', 'pull', 'R:{n}/tmp/d/c', '-'] },
  { args: ['file', 'delete', 'R:{n}/tmp/d'] },
  { args: ['file', 'delete', 'R:{n}/tmp/nosuch'] },
  { args: ['file', 'push', '-r', '{local}/d', 'R:{n}/tmp/p1'] },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'find /tmp/p1 | sort; cat /tmp/p1/d/sub/b'] },
  { args: ['file', 'delete', '-f', 'R:{n}/tmp/p1'], only: 'incus' },
  { args: ['exec', 'R:{n}', '--', 'ls', '/tmp/p1'], only: 'incus' },
];

/** The body of a `POST /1.0/instances` from the test image, with config. */
const createBody = (name: string, config: Record<string, string> = {}): string =>
  JSON.stringify({ name, source: { type: 'image', alias: 'reflex-busybox' }, config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit', ...config } });

/** A zip made on the host (Python's zipfile): `a.txt`, `d/`, `d/b.txt`, deflated, dated 2024-03-05 06:07:08. */
const zipArchive =
  'UEsDBBQAAAAIAOQwZVhIyRFIDAAAAAoAAAAFAAAAYS50eHTLSM3JyVeoyizgAgBQSwMEFAAAAAAA5DBlWAAAAAAAAAAAAAAAAAIAAABkL1BLAwQUAAAACADkMGVYjE0C0AgAAAAGAAAABwAAAGQvYi50eHTLzMtLLeICAFBLAQIUAxQAAAAIAOQwZVhIyRFIDAAAAAoAAAAFAAAAAAAAAAAAAACkgQAAAABhLnR4dFBLAQIUAxQAAAAAAOQwZVgAAAAAAAAAAAAAAAACAAAAAAAAAAAAEADtQS8AAABkL1BLAQIUAxQAAAAIAOQwZViMTQLQCAAAAAYAAAAHAAAAAAAAAAAAAACkgU8AAABkL2IudHh0UEsFBgAAAAADAAMAmAAAAHwAAAAAAA==';

/** An xz file made on the host (Python's lzma): `xz text` and a newline. */
const xzFile = '/Td6WFoAAATm1rRGAgAhARYAAAB0L+WjAQAHeHogdGV4dAoAhya2iR39dcsAASAIuxnZux+2830BAAAAAARZWg==';

/** An ar archive made on the host: `hello.txt` (0644, root) and `b` (0755, uid 1000), dated 2024-03-05 06:07:08. */
const arArchive =
  'ITxhcmNoPgpoZWxsby50eHQvICAgICAgMTcwOTYxODgyOCAgMCAgICAgMCAgICAgMTAwNjQ0ICA5ICAgICAgICAgYApoZWxsbyBhcgoKYi8gICAgICAgICAgICAgIDE3MDk2MTg4MjggIDEwMDAgIDEwMDAgIDEwMDc1NSAgNCAgICAgICAgIGAKYmVlCg==';

/** .Z files made on the host with ncompress: `hello uncompress` and `seq 1 1000`. */
const zSmall = 'H52QaMqwYfMGRB03Y960gSOnzJw5CgA=';
const zFile =
  'H52QMRTIUDBDAQ0FNRTYUHBDAQ4FORTEgCExYIyBMQrGOBgjYYyFMRrGeBgjogyKMgLKGCijoIyDMhLKWCijoYyHMiLOoDgj4IyBMwrOODgj4YyFMxrOeDgjIg2KNALSGEijII2DNBLSWEijIY2HNCLWoFgjYI2BNQrWOFgjYY2FNRrWeFgjog2KNgLaGGijoI2DNhLaWGijoY2HNiLeoHgj4I2BNwreOHgj4Y2FNxreeHgjIg6KOALiGIijII6DOBLiWIijIY6HOCLmoJgjYI6BOQrmOJgjYY6FORrmeJgj4kSKEy3CwAhDIwyOMDzCAAlDJAySMIxPrGjxYkWNGyt6/FhR5MiKxk9KTLkeY8v1HGOuB1lzPcmcEnfmt/gzv8ah+Xl0VH4iLZWfcU9JFJWCGFWlIEdZKQhSVwqSFJZEY2Fo0VkYarQWhh69haFIc2Fo3F0S5ZUiRn2lyFFgKYJUWIokJSbRYjda9NiNGk12o0eX3SjSZjca95lEoSGJUWlIcpQakiC1hiRJsUk0m5UW3WalRrtZ6dFvVoo0nJUmwYASDCotJ1Bza8IU3Zo0VbcmTtkJtF1KKnmXkkvhpSQTeSnZdF5KJqm3kkorCfTeSjDJtxJN9a2EE34todSTQP215BKALck0YEs2GdiSSQm+pNJUAjn4EkwRvkQThS/hdGFMKJUlEIcxufRhTDKJGJNNJcZkEoozqbSXQC3OBBOMM9E040w42VgTSo0JtGNNLvlYk0xB1mQTkTWZdORNKo0mEJM3wfTkTTRJeRNOVeaEUm0CaZmTS13mJBOYOdk0Zk46mUkQmgMDxeZORL25E1Jy7sRUnT3xFINP3vUkVHg9GUVeT0qd15NO6v3kU6I/CfUSQfL9hFR9PzGFX1A8XRoUUEERBGBQRg0YlFIGBqVTgkP5hOpQQl1FUIRDIUXhUExdWBRPthYFVFoEfViUUSIWpVSJRemE4lE+HXuUUH8RBONRSM14FFM2JsVTtUkBFRlBPiZlVJBJKUVkUjoduZRP5i4l1GkEPbkUUlIuxVSVTfFEb1NA5UZQl00ZBWZTSo3ZlFMCPyWVmk9Z9ZxBbz7FlZxPgVVnVFBNbJB3UVkVXlRakReVV+dF5ZR6U0mV6FRWnTyVVjMZVN9UYOFXFVSXVkVVzVVhVZRBA1bllYFVOZXgVVKhepVVRl+l1VYGUXgVWBdmBZWtWVFFdVZYtWWQiFl5VWJWTqG4lVTHbmVV2VvRymAMMqOtgMVGXYFKtbpClbl1BSuVMUiQuuIVInXFKUf6ilTM9RWrEO4rWlmNQaT0FbBUKSxQoVdYqCK5sGClNwYBU1i8MqawiEVgYzGLmsailtGNxS3TQYicxkKXOpWFLK4rC1oygpDwlMUt5CmLXM5TFrGo5yxmSdRZ1HKys7ileGeRy00Qgp+0kOVSaUFLzdLClumlBS5JQYiB0iKWBK3FLKhai1qMtha3kG8tcvkKQi7UFrLYqi1ooVpb2CK/tsAlLggpUVvEgqK3mOVYb1FL2d7ilgG+RS6HQYiN4kKWasUFLXOLC1siGBe4ZAYhRIqLWI40F7OYay5qIdxc3CLCucjlNQipUl3IQq+6oEVydWELDOsCl+AgZEx1sYvA7qIXNd3FL6O7i2CCeBfDXEchdcoLXlyXF74wMS+A6YhCyJMXw5wnL3ZRz170kqi9+OVkexFM8fZimDHuxS766Yte+tMXvwCoL4IZUF8MY6C+2CVBf9ELqv7iF6P9RTDk+4thBPkXu2QoMHrhUGD88qHACEZEgTFMiQJjFxQNRi/HGoxfyjYYwQxwMIYJ5WDsgqPC6GVHhfGLjwojmCAVxjBEKoxdjnQYvZjrMH4h3GEEI8LDGAaYh7HLlRKjFy0lxi9dSoxgwJQYw4wpMYoR2GIco6bFSGZ0i7FMEBejmW8uRjHbaYxjvNMYyYSnMZYhT2M0c57GKEY9j3FMoh4jmZM9xjLFe4xmxvgYxegnMo7pT2QkA6DIWGZAkdGMgSKjmARNxjGomoxkjDYZy5BvMpoR5GQUk6HKOIZDlZHMhypjGRFVRjMlqoxiUHQZxxzrMpIp22UsM8DLaCaUl1EMjjLjmB1lRjI+yoxlgpQZzRApM4o50mYcY67NSIZwm7GMCDejGWBuRjFX6oxjtNQZyXSpM5YBU2c0M6bOeEZgnxGNmj5jmtF9RjVB/IxrvvkZz2wnNKLxTmhME57QqIY8oXHNeULjGfWMRjSJGo1pTjYa1RRvNK4Z42g8o5/SiKY/pTENgEqjmgGVxjUGKo1nEnQa0aDqNKYx2mlUQ77TuEaQp/FMhlIjGg6lxjQfSo1qRJQa15QoNZ5B0WpEc6zVmKZsq1HNAFfjmlCuxjM4ao1odtQa0/ioNaoJUmtcQ6TWeOZIrxGNuV5jGsK9RjUifI1rgPkaz1wpNqLRUmxM06XYqAZMsXHNmGIjG4HNxjZqmo1uRjcb3wRxNsL55mxks53a2MY7tdFNeGrjG/LURjjnqY1s1HMb2yTqNro52W18U7zbCGeMt5GNfnJjm/7kRjcAyo1vBpQb4RgoN7JJ0G5sg6rd6MZou/EN+XYjHEHuRjYZ6o1tONQb3XyoN74RUW+EU6LeyAZFv7HNsX6jm7L9xjcD/I1wQvkb2eAoOLbZUXB046Pg+CZIwREOkYIjmyMNxzbmGo5uCDcc34hwOMIB5nBkc6Xi2EZLxdFNl4rjGzAVRzhjKo5xzEQR';

/** LZMA-alone files made on the host (`xz --format=lzma`): `hello lzma` and `seq 1 2000`. */
const lzmaSmall = 'XQAAgAD//////////wA0GUnujekUimql1d5wKZ///ZlAAA==';
const lzmaFile =
  'XQAAgAD//////////wAYgoKPIk74plX38JmlJQ2QRZFaUbSbyqzcBTLshVKfsUht79zoS7lhuuCcU3+YyKlUDvw9KtMG12ZEPVZkps0918cfRPQY3wILP+LGxnvh5395RBx5t0KuZbgbtQ6E4ZqCBiM5Wn9yqkP6pZofksC+RXF5StWTxpAKOa2cZYcqtho4x+GTF8rQPgnqsFLwEGAmwF5fEJENuXl4fZdCYNCmOHfhI+i7KE+IUi11WCY/Zv3inOvTr2HZNXr/+2KxPHyTHPJkuE0chSqxXAAGNgFK67wFSO9caLU8cYGeLGzkZwbPhSp1CRmMvBdEDc08acY2xJ6c0u47NRI+k1KXnZHhTVYxXsrlloKvQAyFo0lWyJFqQDX5FORVLVE1JFKEgBcgLVwDjMHoei11elyExOk3/ocae0XElADgGG2ftyfCj9jMK02AbKgjfca9OO9n1BHiMJjj/0MhEj1lo5dhLKfmj5HnGqZLUyNjMFihcD6xkQNpT4o2mG1ErHJEoH7Wt6UG/+08923p3aL8H+x6DCdh8PXb3+Bmv8FQ+2BWZjKoeBjG7oFCkcnUnkCSmSp+42fPA6MgwMOQQDnIzRaswKVvHlNMD9Z5SrCH11cjSJVlIU6JsoWELLwQsdl6dmMtrCZVnvmUUY2J8KCvsQ601lHtANSxQ7PreLtC8b9XeXAPOnsnr4RGvJ6/AbX7iAx3FfKqxvMs5mb2HGBv02jvrM9pEBrneCDfaH/6vLbfzRjeCQM4P1BAdHqpDqJTA6O/LpmSsfx0KkwBy0yK8TQjxgps4a8d8f8p39RTEjCPo8A5VWe4yGn2hI55fpi3vi+D0fj1gWaXGFnbhc5zfOOUiOUcu/cgOq1AQ9vOTznT5VpL65eUOVgkC0d0+8QMSuqki1Z96jHZCe0taZbcPWx01JpUOiMWiNdE4b0AZqDVYopt97WUbe16fu5EaiUWXUUcHcpGJEdwFpPLMF7WBdllpcQk9qVRt4ttONayzAdsLKVNpYTRnOew9hsi9Xwjbz0Kt3mrUyYPnBtzkkqLL2hvOu9l3vsxm5kc4BImMTTU6KYV6cVKnFP15HdHuZaW1sYdcw2Y94Y/BDm1F1k6fKb3JRJfr4WgGsg8k/xqnN3Uu5hwex558/jHlsEu4hrQMkNiBcPQJLFzOx82cdEPfBg5jG5axI0d///rQ8ef';

/** Packages built on the host for dpkg, dpkg-deb, rpm and rpm2cpio; test/fixtures/packages/README.md says how. */
const packageFile = (name: string): string => readFileSync(new URL(`../fixtures/packages/${name}`, import.meta.url)).toString('base64');
const helloDeb = packageFile('hello_1.0-1_all.deb');
const helloXzDeb = packageFile('hello_1.0-1_all.xz.deb');
const needyDeb = packageFile('needy_2.0_all.deb');
const helloRpm = packageFile('hello-1.0-1.noarch.rpm');
const lzmaDeb = packageFile('hello_1.0-1_all.lzma.deb');
const lzmaRpm = packageFile('hello-1.0-1.noarch.lzma.rpm');
const linksDeb = packageFile('links_2.0_all.deb');

/** The files the ls and stat lines list, made afresh by each line (a real exec may run twice). */
const lsFiles =
  'rm -rf /tmp/rt-ls; mkdir -p /tmp/rt-ls/w/d/sub /tmp/rt-ls/w/e; cd /tmp/rt-ls/w; echo hello > f; ln -s f b; ln -s nowhere dangling; ' +
  'printf 123456789012 > big; touch .hid; chmod 755 big; dd if=/dev/zero of=m bs=1024 count=1500 2>/dev/null; chown 1234:5678 e; ln -s d dl; ';

/**
 * Busybox programs a script types first, a few shell lines each (one exec per line keeps the suite
 * short). What is the host's (memory, uptime, load, the processes' figures) is reduced to its shape by
 * the line itself (sed, awk), so the daemon's repeated runs agree; docs/simulator.md lists it.
 */
const busyboxSteps: (string | { user: number; script: string })[] = [
  // The shell's redirections it cannot open (a missing directory, a file as one, a directory, noclobber, input): the command fails
  // with 1 and nothing is made, a subshell's is 2, a special builtin's ends the shell; raw bytes through groups, subshells,
  // functions, loops, if, case and a nested sh; grep with several -e patterns; a compound command's streams in order under 2>&1
  // (patches/README.md).
  'echo x > /nosuch/f; echo "rc=$?"; echo x > /tmp; echo "rc=$?"; echo x > /etc/passwd/x; echo "rc=$?"; echo x >> /nosuch/f; ' +
    'echo "rc=$?"; cat < /nosuch; echo "rc=$?"; { echo x; } > /nosuch/f; echo "rc=$?"; ( echo x ) > /nosuch/f; echo "rc=$?"; ' +
    'ls /nosuch 2>/nosuch/e; echo "rc=$?"; echo a | cat > /nosuch/q; echo "rc=$?"; if echo x > /nosuch/f; then echo t; else echo f; fi; ' +
    'for i in 1; do echo x; done > /nosuch/f; echo "rc=$?"; > /nosuch/f; echo "rc=$?"; ls -d /nosuch; echo "rc=$?"; ' +
    'echo a > /tmp/nc; set -C; echo b > /tmp/nc; echo "rc=$?"; set +C; cat /tmp/nc; (exec 3> /nosuch/f; echo never); echo "rc=$?"; ' +
    '(: > /nosuch/f; echo never); echo "rc=$?"',
  "{ printf '\\xff'; } | od -An -tx1; (printf '\\xfe') | od -An -tx1; { echo é; printf '\\xfd'; } | od -An -tx1; " +
    "f() { printf '\\xfc'; }; f | od -An -tx1; for i in 1; do printf '\\xfb'; done | od -An -tx1; " +
    "if true; then printf '\\xfa'; fi | od -An -tx1; sh -c \"printf '\\xf9'\" | od -An -tx1; case a in a) printf '\\xf7';; esac | od -An -tx1; " +
    "x=0; while [ $x -lt 2 ]; do x=$((x+1)); printf '\\xf8'; echo é; done | od -An -tx1; printf '\\xff'; echo é; printf '\\xe9\\n'",
  "printf 'a\\xc3\\xa9\\n' | od -An -tx1; printf '\\\\xff\\xe9\\n' | od -An -tx1; printf '\\101\\0302\\0251\\n' | od -An -tx1; " +
    "printf '%s\\xc3\\xa9%b\\n' é '\\xff' | od -An -tx1; printf '\\xe2\\x82\\xac\\n' | od -An -tx1; printf '\\400\\xff\\n' | od -An -tx1; " +
    "printf '\\045d\\xff\\n' 5 | od -An -tx1; printf '\\0\\xff' | od -An -tx1; printf 'é\\xff\\n' | od -An -tx1",
  // alias and unalias as ash's: its table's order and quoting, its refusals, an alias serving the lines after its own.
  'unalias; echo $?; alias b=1 a=2 c=3 aa=4; alias; unalias -a; alias; echo $?\n' +
    `alias x="'q'"; alias x; alias -p; echo $?; alias 'q=it'\\''s'; alias q; unalias x nosuch; echo $?\nalias say=echo\nsay hi\nset | grep -c say; env | grep -c say`,
  // A file written over keeps its inode (O_TRUNC), one appended to too; sed -i renames a new file over the name.
  'cd /tmp; echo a > f; a=$(stat -c %i f); echo b > f; b=$(stat -c %i f); echo c >> f; c=$(stat -c %i f); sed -i s/b/z/ f; d=$(stat -c %i f); ' +
    'cp /etc/passwd f; e=$(stat -c %i f); [ $a = $b ] && echo same1; [ $b = $c ] && echo same2; [ $c = $d ] || echo new3; [ $d = $e ] && echo same4; ' +
    'ln f g; echo q > g; [ $(stat -c %i g) = $e ] && echo same5; cat f; rm f g',
  "printf 'A\\nB\\nAB\\n' > /tmp/g; grep -x -e A -e B /tmp/g; grep -e A -e B /tmp/g; grep -w -e A -e B /tmp/g; grep -F -x -e A -e B /tmp/g; " +
    'grep -c -e A -e B /tmp/g',
  '{ echo out; echo err >&2; echo out2; } 2>&1 | cat; (echo a; ls /nosuch; echo b) 2>&1 | cat; f() { echo 1; echo 2 >&2; echo 3; }; ' +
    'f 2>&1 | cat; for i in 1 2; do echo o$i; echo e$i >&2; done 2>&1 | cat; { echo x; echo y >&2; echo z; } > /tmp/both 2>&1; ' +
    'cat /tmp/both; sh -c "echo p; echo q >&2; echo r" 2>&1 | cat; { echo a; { echo b >&2; echo c; } 2>/dev/null; echo d >&2; } 2>&1 | cat',
  // The network: none beyond a loopback that is down, so every name is unknown and every address unreachable.
  'ip addr; ip link; ip route; echo $?; ip -br a; echo $?; ifconfig; ifconfig -a; route -n; netstat -tln; ' +
    'ping -c1 -W1 10.0.0.1; echo $?; ping -c1 nosuch.invalid; echo $?; wget -q -O- http://nosuch.invalid/; echo $?; ' +
    'wget http://10.1.2.3/; echo $?; nc 10.1.2.3 80; echo $?; nc -z 10.1.2.3 80; echo $?; nslookup example.com; echo $?; ' +
    'ip -6 addr; ip a s lo; ip addr show nosuch; ifconfig nosuch; netstat -an; wget -O /tmp/x http://10.1.2.3:8080/p; ping -c1 ::1; ping6 -c1 fe80::1',
  // Users, mounts, processes, the kernel; /proc/self is the program that reads it.
  'head -c 12 /dev/urandom | wc -c; head -c 5 /dev/zero | od -c; tr -dc a-z < /dev/urandom | head -c 8 | wc -c; echo $SHLVL; halt; poweroff; echo $?; ' +
    'mount | grep " on /proc type "; umount; echo $?; umount /proc; who; w; logname; echo $?; tty; echo $?; groups; ' +
    'cat /proc/self/comm; head -1 /proc/self/status; cat /proc/self/cmdline | tr "\\0" " "; echo; cat /proc/$$/comm; ' +
    'read x < /proc/self/comm; echo $x; pidof testinit; pidof nosuch; echo $?; killall nosuch; echo $?; killall -0 testinit; echo $?; ' +
    'logger hi; sync; dmesg; echo $?; sysctl kernel.hostname; sysctl -n kernel.ostype; sysctl nosuch.key; sysctl -w kernel.hostname=x; echo $?; ' +
    'usleep 1000; realpath /etc/../tmp /nosuch /a/b; truncate -s 5 /tmp/rt-t; wc -c < /tmp/rt-t; unlink /tmp/rt-t; unlink /tmp/rt-t; echo $?; ' +
    'echo hi | sha512sum; busybox echo hi; busybox nosuch; echo $?; busybox | head -1',
  // The host's figures, by shape (init's state letter too: it is R while its loop runs, on a loaded host).
  'free | sed -n 1p; free | awk "NR>1{print \\$1, NF}"; free -m | awk "{print NF}"; free -h | sed -n 1p; ' +
    'uptime | sed "s/[0-9][0-9]*/N/g; s/  */ /g"; nproc | grep -c "^[0-9][0-9]*$"; top -b -n1 | sed "s/[0-9][0-9]*/N/g; s/  */ /g" | sed -n 1,4p; ' +
    'top -b -n1 | grep -c "^ *1 *0 root *[A-Z] .* {testinit} /bin/sh /sbin/testinit$"; mount | grep -c " on / type "',
  // Text programs as busybox's: byte order, count widths, xargs -nN and -I.
  'printf "b\\nB\\na\\nA\\n_x\\n1\\n" | sort | tr "\\n" " "; echo; printf "b\\nB\\na\\n" | sort -f | tr "\\n" " "; echo; ' +
    'printf "b\\nb\\na\\n" | uniq -c; printf "10\\n9\\n100\\n9\\n" | sort -rnu; wc /etc/passwd; wc -l /etc/passwd; echo x | wc -lw; ' +
    'wc -l /etc/passwd /etc/group; echo a b c | xargs -n1; echo a b | xargs -I{} echo x{}y; kill -l | tr "\\n" "|"; kill -l 15; kill -l TERM; ' +
    'stat -c %s / /etc/passwd; echo hi | md5sum; echo hi | sha1sum; echo hi | sha256sum; md5sum /tmp /nosuch; echo $?; ' +
    'getopt -o ab:c:: -l name:,flag -n me -- -abval -c -cz --name=n1 --fl "a b" -- -x; getopt -o a -- -z; echo $?; getopt ab -a x -b; ' +
    'shuf -i 1-5 | sort | tr "\\n" " "; shuf -n 2 -e a b c | wc -l; hostid; echo hi | sha3sum; echo hi | sha3sum -a 256',
  // xargs's exit statuses as busybox's: 123 for a run that failed, 124 for 255 (and its message), 127 for a missing program.
  'echo a | xargs false; echo $?; echo a | xargs sh -c "exit 2"; echo $?; echo a | xargs sh -c "exit 255"; echo $?; ' +
    'echo a | xargs nosuchprog; echo $?; echo a b | xargs -n1 sh -c "test \\$0 = b"; echo $?',
  // File programs: chgrp, cmp, link, line ends, dumps (od as busybox's), pagers off a terminal, su as root.
  'echo hi > /tmp/rt-a; echo hj > /tmp/rt-b; chgrp 34 /tmp/rt-a; stat -c %g /tmp/rt-a; chgrp nosuch /tmp/rt-a; chgrp root /nosuch; ' +
    'cmp /tmp/rt-a /tmp/rt-b; echo $?; cmp -s /tmp/rt-a /tmp/rt-a; echo $?; cmp /tmp/rt-a /nosuch; echo $?; arch | wc -l; more /tmp/rt-a; less /tmp/rt-a; ' +
    'link /tmp/rt-a /tmp/rt-l; link /tmp/rt-a /tmp/rt-l; cat /tmp/rt-l; printf "a\\r\\nb\\n" | dos2unix | od -c; printf "a\\nb\\n" | unix2dos | od -b; ' +
    'printf "abc\\001\\377\\tz0123456789abcdef" > /tmp/rt-o; od /tmp/rt-o; od -x /tmp/rt-o; od -An -t x1 /tmp/rt-o; od -An -tx1 /tmp/rt-o; od -Anv -tx1 /tmp/rt-o; od -d /tmp/rt-o; hexdump -C /tmp/rt-o; hexdump /tmp/rt-o; xxd /tmp/rt-o; ' +
    'su -c "id -u"; su nobody; echo $?; su root -c "echo \\$0 \\$HOME"; setsid echo x; rm /tmp/rt-a /tmp/rt-b /tmp/rt-l /tmp/rt-o',
  // Archives (issue #41 item 5): unzip of a zip made on the host (listing, extraction, -o -n -j -p -d -x -q, the
  // question an existing file asks), bzip2/bunzip2/bzcat (their suffixes, refusals and bad data).
  `mkdir /tmp/rt-z; cd /tmp/rt-z; echo ${zipArchive} | base64 -d > z.zip; unzip -l z.zip; unzip z.zip; echo $?; unzip -o -q z.zip; ` +
    `unzip -p z.zip a.txt d/b.txt; unzip -n z.zip a.txt; unzip -d sub z.zip d/b.txt; find sub | sort; stat -c "%a %n" a.txt d; unzip nosuch; ` +
    `echo $?; unzip a.txt; echo $?; bzip2 -k a.txt; bzcat a.txt.bz2; bzip2 -c d/b.txt | bunzip2; bunzip2 a.txt.bz2; echo $?; rm a.txt; ` +
    `bunzip2 a.txt.bz2; cat a.txt; ls; bzip2 -d a.txt; echo $?; bzcat nosuch; echo $?; bzip2 d/b.txt; ls d; bzip2 -t d/b.txt.bz2; echo $?; ` +
    `unzip z.zip; echo $?; unzip -j -o z.zip; ls; unzip -o z.zip -x d/b.txt; unzip -ql z.zip; unzip -o z a.txt; unzip -l z.zip nosuch; ` +
    `echo junk > j; echo junk > j.bz2; bzcat j; echo $?; bunzip2 j.bz2; echo $?; bzip2 -d < j; echo $?; bzip2 nosuch; echo $?; bzip2 -c /tmp; ` +
    `echo $?; cd /; rm -r /tmp/rt-z`,
  // bzip2's bytes (libbzip2's, as busybox's), and what bunzip2 says of a stream cut short, corrupt or not bzip2's.
  'printf "hello zip\\n" | bzip2 | od -An -t x1; seq 1 1000 | bzip2 > /tmp/s.bz2; bzip2 -dc /tmp/s.bz2 | tail -1; ' +
    'head -c 100 /tmp/s.bz2 | bunzip2 >/dev/null; echo $?; cp /tmp/s.bz2 /tmp/t; ' +
    'printf XXXXXXXXXXXXXXXXXX | dd of=/tmp/t bs=1 seek=50 conv=notrunc 2>/dev/null; wc -c < /tmp/t; bunzip2 < /tmp/t > /dev/null; echo $?; ' +
    'printf "BZh" | bunzip2; echo $?; printf "BZhx" | bunzip2; echo $?; printf "BZh9" | bunzip2; echo $?; rm /tmp/s.bz2 /tmp/t',
  // xz, unxz, xzcat (busybox's decompress only): files, stdin, refusals, data that is not xz's (nothing, exit 0), a stream cut short.
  `mkdir /tmp/rt-xz; cd /tmp/rt-xz; echo ${xzFile} | base64 -d > rt-t.xz; xzcat rt-t.xz; xz -dc < rt-t.xz; unxz -k rt-t.xz; cat rt-t; unxz rt-t.xz; ` +
    `echo $?; rm rt-t; unxz rt-t.xz; ls; xz rt-t; echo $?; xz -d rt-t; echo $?; cat rt-t; ls; echo $?; echo junk > rt-j.xz; ` +
    `unxz rt-j.xz; echo $?; xzcat rt-j.xz; echo $?; echo ${xzFile} | base64 -d | head -c 40 | unxz; echo $?; xzcat nosuch; echo $?; ` +
    `xzcat /etc/passwd; echo $?; cd /; rm -r /tmp/rt-xz`,
  // bzip2 and xz over bbunpack as busybox's: refused options and their usages, bzip2 -d handing over to bunzip2 (its levels
  // refused), -v's percentages (wrapped), the input's mode less the umask, levels and -s, a stream cut short before a second
  // operand or after whole blocks (those written, in 4 KiB writes), concatenated streams and what follows the last, a `-`
  // after a file (what it left: nothing), directories.
  `mkdir /tmp/rt-bb; cd /tmp/rt-bb; bzip2 -x; echo $?; bunzip2 -x; bzcat -x; xz -x 2>&1 | head -1; unxz -x; xzcat -x; echo $?; ` +
    `printf "hello bz\\n" | bzip2 > h.bz2; bzip2 -d -9 h.bz2; echo $?; bzip2 -dz h.bz2 2>&1 | head -1; seq 1 3000 > c; chmod 666 c; ` +
    `bzip2 -v c; stat -c "%a %n" c.bz2; chmod 777 c.bz2; bunzip2 -v c.bz2; stat -c "%a %n" c; cp h.bz2 a.bz2; bzip2 -dv a.bz2; ` +
    `printf "" > e; bzip2 -v e; bunzip2 -v e.bz2; seq 1 3000 | bzip2 -1 | md5sum; seq 1 3000 | bzip2 -s | md5sum; ` +
    `seq 1 3000 | bzip2 -7 -3 | md5sum; head -c 30 h.bz2 > cut.bz2; cp h.bz2 h2.bz2; bunzip2 cut.bz2 h2.bz2; echo $?; ls; ` +
    `cat h.bz2 h.bz2 > hh.bz2; echo BZjunk >> hh.bz2; bzcat hh.bz2; echo $?; cp h.bz2 hj.bz2; echo junk >> hj.bz2; bzcat hj.bz2; ` +
    `echo $?; bzcat h.bz2 - < h.bz2; echo $?; bzcat /tmp; bzip2 -c /tmp; echo $?; bzip2 -t h.bz2 cut.bz2; echo $?; ` +
    `seq 1 40000 | bzip2 -1 > s.bz2; head -c 30000 s.bz2 | bzcat | wc -c; head -c 46060 s.bz2 | bzcat | wc -c; ` +
    `bzip2 -k -f -q -- - < e | wc -c; echo ${xzFile} | base64 -d > t.xz; cp t.xz u.xz; unxz -v u.xz; echo junk > j.xz; unxz -v j.xz; ` +
    `xzcat /tmp; echo $?; cat t.xz t.xz > tt.xz; printf "\\0\\0\\0\\0junk" >> tt.xz; xzcat tt.xz; echo $?; cp t.xz p.xz; ` +
    `printf "\\0\\0\\0\\0" >> p.xz; xzcat p.xz; echo $?; printf "\\375junk" | unxz; echo $?; head -c 40 t.xz > cut.xz; cp t.xz t2.xz; ` +
    `unxz -f cut.xz t2.xz; echo $?; ls; cd /; rm -r /tmp/rt-bb`,
  // ar (reading only): t, tv, p, x with modes and owners, a file that is there, refusals.
  `mkdir /tmp/rt-ar; cd /tmp/rt-ar; echo ${arArchive} | base64 -d > t.a; ar t t.a; ar tv t.a; ar p t.a b; ar x t.a; ls; cat hello.txt; ` +
    `stat -c "%a %u %n" hello.txt b; ar x t.a; echo $?; rm hello.txt b; ar xo t.a hello.txt; ls; ar xv t.a; ar p t.a nosuch; echo $?; ` +
    `ar t nosuch.a; echo $?; echo junk > j.a; ar t j.a; echo $?; ar; echo $?; ar q t.a b; echo $?; cd /; rm -r /tmp/rt-ar`,
  // cpio -o -H newc, -t (-v), -i (-d, -u, a name), and its refusals; the dates of -tv are the run's own.
  'mkdir -p /tmp/rt-c/d; cd /tmp/rt-c; echo one > a; echo two > d/b; ln -s a l; find . | sort | cpio -o -H newc > /tmp/rt-x.cpio; echo $?; ' +
    'cpio -t < /tmp/rt-x.cpio; cpio -tv -F /tmp/rt-x.cpio | sed "s/ 20[0-9-]* [0-9:]* / DATE /"; mkdir /tmp/rt-e; cd /tmp/rt-e; ' +
    'cpio -i < /tmp/rt-x.cpio; echo $?; find . | sort; cpio -id < /tmp/rt-x.cpio; echo $?; cat a d/b; readlink l; cpio -i < /tmp/rt-x.cpio; ' +
    'echo $?; cpio -idu d/b < /tmp/rt-x.cpio; echo $?; echo a | cpio -o; echo $?; echo junk | cpio -t; echo $?; cpio -x; echo $?; cd /; ' +
    'rm -r /tmp/rt-c /tmp/rt-e /tmp/rt-x.cpio',
  // mkfifo and mknod (devices refused as in an unprivileged container), crontab with and without its directory.
  'mkfifo /tmp/rt-f; echo $?; mkfifo /tmp/rt-f; echo $?; mkfifo -m 600 /tmp/rt-g; stat -c "%a" /tmp/rt-g; mkfifo; echo $?; mkfifo /nosuch/f; ' +
    'echo $?; mknod /tmp/rt-n c 1 3; echo $?; mknod /tmp/rt-p p; echo $?; mknod /tmp/rt-b b 7 0; echo $?; mknod /tmp/rt-x q; echo $?; ' +
    'rm -f /tmp/rt-f /tmp/rt-g /tmp/rt-p; crontab -l; echo $?; crontab -u nosuch -l; echo $?; crontab /nosuch; echo $?; crontab; echo $?; ' +
    'mkdir -p /var/spool/cron/crontabs; crontab -l; echo $?; echo "* * * * * echo hi" | crontab -; echo $?; crontab -l; ' +
    'stat -c "%a %s %n" /var/spool/cron/crontabs/*; printf "1 2 * * * x\\n" > /tmp/rt-ct; crontab /tmp/rt-ct; crontab -u root -l; crontab -r; ' +
    'echo $?; crontab -l; echo $?; crontab -r; echo $?; cat /var/spool/cron/crontabs/cron.update; rm -r /var/spool/cron /tmp/rt-ct',
  // patch: -p, -R, -i, --dry-run, ORIGFILE, a failed hunk (the file left as it was), /dev/null creating and emptying.
  'mkdir -p /tmp/rt-p/a; cd /tmp/rt-p; seq 1 20 > a/f; ' +
    'printf -- "--- a/f\\n+++ b/f\\n@@ -1,6 +1,6 @@\\n 1\\n 2\\n-3\\n+three\\n 4\\n 5\\n 6\\n@@ -14,7 +14,7 @@\\n 14\\n 15\\n 16\\n-17\\n+seventeen\\n 18\\n 19\\n 20\\n" > p.diff; ' +
    'cp a/f f; patch < p.diff; echo $?; patch -p1 < p.diff; echo $?; cmp a/f f; patch -R -p1 < p.diff; echo $?; cmp a/f f; sed -i "s/^17$/x/" f; ' +
    'patch -p1 -i p.diff; echo $?; cat f | tr "\\n" " "; echo; cp a/f g; patch g p.diff; echo $?; sed -n 3p g; patch -p1 --dry-run < p.diff; ' +
    'echo $?; patch -p1 nosuch < p.diff; echo $?; echo garbage | patch; echo $?; ' +
    'printf -- "--- /dev/null\\n+++ b/new\\n@@ -0,0 +1,2 @@\\n+n1\\n+n2\\n" > n.diff; patch -p1 < n.diff; echo $?; cat new; ' +
    'printf -- "--- a/new\\n+++ /dev/null\\n@@ -1,2 +0,0 @@\\n-n1\\n-n2\\n" | patch -p1; echo $?; patch -p1 -R < n.diff; echo $?; ls; cd /; ' +
    'rm -r /tmp/rt-p',
  // Small file and text programs: nologin, factor, crc32, uuencode/uudecode, fallocate, shred, nuke, dnsdomainname
  // (no resolver), last (no wtmp), ts (the year reduced to its shape).
  'nologin; echo $?; factor 12 97 1 0 360 4294967297; echo $?; factor x; echo $?; echo 15 | factor; printf "hello\\n" > /tmp/rt-u; ' +
    'crc32 /tmp/rt-u; echo hi | crc32; crc32 /nosuch; echo $?; uuencode /tmp/rt-u name; uuencode -m /tmp/rt-u name; ' +
    'uuencode /tmp/rt-u name | uudecode -o -; uuencode -m /tmp/rt-u /tmp/rt-v | uudecode; cat /tmp/rt-v; stat -c %a /tmp/rt-v; ' +
    'echo junk | uudecode; echo $?; uuencode; echo $?; fallocate -l 4096 /tmp/rt-fa; stat -c %s /tmp/rt-fa; fallocate -o 100 -l 10 /tmp/rt-fa; ' +
    'stat -c %s /tmp/rt-fa; fallocate -l 1k /tmp/rt-fb; stat -c %s /tmp/rt-fb; fallocate /tmp/rt-fc; echo $?; shred -n 1 -z /tmp/rt-u; ' +
    'od -c /tmp/rt-u; shred -u /tmp/rt-u; ls /tmp/rt-u; shred /nosuch; echo $?; mkdir -p /tmp/rt-nk/a; nuke /tmp/rt-nk; test -e /tmp/rt-nk; ' +
    'echo $?; nuke /nosuch; echo $?; dnsdomainname; echo $?; last; echo $?; echo a | ts "%Y" | sed "s/[0-9]/N/g"; run-parts; echo $?; ' +
    'rm -f /tmp/rt-v /tmp/rt-fa /tmp/rt-fb',
  // ascii, ipcalc (inet_aton's forms, class netmasks, a prefix or a netmask, its refusals; -h without a resolver), dumpleases.
  'ascii; echo $?; ipcalc 192.168.1.10/24; echo $?; ipcalc -bnm 10.1.2.3/8; ipcalc -p 10.0.0.1 255.255.0.0; ' +
    'ipcalc -n 172.16.5.4 255.255.255.0; ipcalc -m 10.1.2.3; ipcalc -bnmp 10.1.2.3 255.255.255.0; ipcalc -b 1.2.3.4/33; echo $?; ' +
    'ipcalc -b 1.2.3.4/0; ipcalc -n 1.2.3; echo $?; ipcalc -n 1.2.3.4 255.0.255.0; ipcalc -p 1.2.3.4/20; ipcalc -h 127.0.0.1; echo $?; ' +
    'ipcalc -b 300.1.1.1; echo $?; ipcalc -bs 300.1.1.1; echo $?; ipcalc -b 1.2.3.4 5.6.7.8 9; echo $?; ipcalc -bn 192.168.1.10; ' +
    'ipcalc -n 0x0a.010.1.1; dumpleases; echo $?; mkdir -p /var/lib/misc; touch /var/lib/misc/udhcpd.leases; dumpleases; echo $?; ' +
    'rm -r /var/lib/misc',
  // Loose ends of issue #41: ls -d lists its operands as files (sorted, no blank line between); ar p with v lists
  // the members after their bytes, options come anywhere, c is taken; cpio -R sets owners (archived, listed,
  // extracted), -L archives what a symlink points to, root extracts with the archive's owners; patch -N leaves a
  // hunk that is applied already, and "Possibly reversed hunk" is said when a hunk fails that way.
  'mkdir -p /tmp/rt-q/d; cd /tmp/rt-q; echo one > f; ls -d f d; ls -d d /tmp/rt-q/d f nosuch; echo $?; ls -dr f d; ls -d1 d/ f; ' +
    'cd /; rm -r /tmp/rt-q',
  `mkdir /tmp/rt-q; cd /tmp/rt-q; echo ${arArchive} | base64 -d > t.a; ar pv t.a; ar p -v t.a b; ar t t.a -v hello.txt; ar tc t.a; ` +
    `ar pt t.a; echo $?; ar t -- t.a b; cd /; rm -r /tmp/rt-q`,
  'mkdir -p /tmp/rt-q/d; cd /tmp/rt-q; echo one > f; chown 33:34 f; ln -s f l; ln -s nowhere n; ' +
    'printf "f\\nd\\nl\\n" | cpio -o -H newc -R 1000:1000 | cpio -tv | cut -c1-22; printf "f\\nl\\n" | cpio -o -H newc -R :7 -L | cpio -tv -R 5 | cut -c1-22; ' +
    'echo f | cpio -o -H newc -R nosuch; echo $?; echo f | cpio -o -H newc -R 0.nosuch; echo n | cpio -o -H newc -L | wc -c; ' +
    'printf "f\\nd\\n" | cpio -o -H newc > /tmp/rt-q.cpio; mkdir e; cd e; cpio -i < /tmp/rt-q.cpio; stat -c "%u %g %n" f d; rm f; ' +
    'cpio -i -R 9: < /tmp/rt-q.cpio; stat -c "%u %g %n" f; printf "" | cpio -t; echo $?; cd /; rm -r /tmp/rt-q /tmp/rt-q.cpio',
  'mkdir /tmp/rt-q; cd /tmp/rt-q; seq 1 8 > s; printf -- "--- a/s\\n+++ b/s\\n@@ -2,4 +2,5 @@\\n 2\\n 3\\n+new\\n 4\\n 5\\n" > a.diff; ' +
    'patch s a.diff; patch s a.diff; echo $?; patch -N s a.diff; echo $?; patch --forward s a.diff; seq 1 8 > r; patch -R r a.diff; ' +
    'echo $?; patch -RN r a.diff; echo $?; tr "\\n" " " < s; tr "\\n" " " < r; echo; cd /; rm -r /tmp/rt-q',
  // ls and stat as busybox's: the long listing's columns, a symlink as a symlink (name -> target, its length, 'symbolic link'),
  // a directory's 4096 bytes and links, totals in 1K blocks, -n -s -h -F -p -L -H -R -C -x -w -S -r -i --color --full-time,
  // files before directories under their headers, and the messages; times masked (normalise.ts leaves "Dec  3 08:07"), inodes too.
  `${lsFiles}T="s/[A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]/T/"; ls; ls -l | sed "$T"; ls -la | sed "$T"; ls -n | sed "$T"; ls -s; ls -ls | sed "$T"; ls -A; ` +
    'ls -lh | sed "$T"; ls -F; ls -p; ls -lF | sed "$T"; ls -lL | sed "$T"; echo $?; ls -R; ls -lR d | sed "$T"; ls -C; ls -x -w 30; ls -xs -w 40',
  `${lsFiles}T="s/[A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]/T/"; ls f d e b; ls -l f d nosuch e | sed "$T"; ls -l b dl | sed "$T"; ` +
    'ls -lL b dl | sed "$T"; ls dl; ls -lH dl | sed "$T"; ls -S; ls -r; ls -i f | sed "s/^ *[0-9]*/N/"; ls -z; echo $?; ls --foo 2>&1 | head -2; ' +
    'ls f/; ls dangling/; ls dangling; echo $?; ls --group-directories-first; ls --color=always f d b; ls -l --color=always b | sed "$T"; ' +
    'ls -ld /tmp | cut -c1-10; ls -1C d e f big; ls -w abc; echo $?; ls -e 2>&1 | head -1; ls -d nosuch f; ls -Rd d; cd /; rm -r /tmp/rt-ls',
  `${lsFiles}touch -d "2024-01-02 03:04:05" f; ls -l f; ls --full-time f; stat -c "%a %s %F %N %h %b %f %u %g %U %G" b f d e dangling big; ` +
    'stat -L -c "%a %s %F %N" b dl; stat -L -c %F dangling; echo $?; stat -c "%y %Y %A %o %B %d %D %t %T %-5s| %05a %q %%" f; ' +
    'stat -t f | cut -d" " -f1-7,9-13,15; stat b | sed -e "s/Inode: [0-9]* /Inode: N /" -e "s/^Access: 2.*/Access: T/" ' +
    '-e "s/^Modify: 2.*/Modify: T/" -e "s/^Change: 2.*/Change: T/"; stat; echo $?; cd /; rm -r /tmp/rt-ls',
  // A directory's mtime moves when an entry is made, removed or renamed in it (what ls -l and stat show of it).
  'rm -rf /tmp/rt-lt; mkdir -p /tmp/rt-lt/a; cd /tmp/rt-lt; old="2024-01-02 03:04:05"; ' +
    'near() { d=$(stat -c %Y $1); n=$(date +%s); [ $((n - d)) -le 5 ] && echo "$1 moved" || echo "$1 kept"; }; touch -d "$old" . a; near .; ' +
    'touch f; near .; near a; touch -d "$old" .; echo x > f; near .; rm f; near .; touch -d "$old" . a; mkdir -p a/b/c; near .; near a; ' +
    'touch -d "$old" . a; mv a z; near .; touch -d "$old" .; ln -s z l; near .; cd /; rm -r /tmp/rt-lt',
  // rm, rmdir, mv, cp, touch, mkdir, ln: busybox's messages, usages and exit codes (missing files, directories, '.' and '..',
  // wrong options), then what they do: links into a directory, -p, -m, -v, -i, -n, -T, -t, touch's dates, cp's recursion.
  'mkdir /tmp/rt-cu; cd /tmp/rt-cu; mkdir d; echo a > f; rm /nosuch; echo $?; rm d; echo $?; rm -r /nosuch; echo $?; rm -f /nosuch; echo $?; rm; echo $?; ' +
    'rm -f; echo $?; rm -r ..; echo $?; rm -z f; echo $?; rmdir /nosuch; rmdir /; rmdir .; touch d/x; rmdir d; rmdir f; echo $?; rmdir; echo $?; ' +
    'mv /nosuch x; echo $?; mv f; echo $?; mv f g h; echo $?; mv d d/s; echo $?; mv f nosuch/x; echo $?; mv -z f g; echo $?; cp /nosuch x; echo $?; cp d x; ' +
    'echo $?; cp f /nosuch/x; echo $?; cp f f; echo $?; cp f d/x/y; echo $?; cp; echo $?; touch /nosuch/x; echo $?; ls -d /nosuch; touch f/x; touch nd/; touch; ' +
    'echo $?; touch -d bogus t; echo $?; touch -r nosuch t; echo $?; mkdir /nosuch/x; mkdir d; mkdir -p d; echo $?; mkdir -p f/g; mkdir f/x; mkdir -m zz m; ' +
    'mkdir; echo $?; ln -s f d; ls d; ln d x; ln /nosuch x; ln -s f d; ln -sT f d; ln; echo $?; chmod 644 /nosuch f; echo $?; chmod; echo $?; chmod zz f; ' +
    'echo $?; cd /; rm -r /tmp/rt-cu',
  'mkdir -p /tmp/rt-cu/d/e /tmp/rt-cu/l; cd /tmp/rt-cu; echo a > f; echo b > g; ln -s ../f l; ln -s /tmp; ln -sv f v; ln -sf g v; readlink l/f; ' +
    'readlink tmp; readlink v; ln -s nowhere n; ln -sf l n; readlink n; readlink l/l; ln f h; ln -s x y z; echo $?; readlink z; mkdir -pv p/q/r; ' +
    'rmdir -pv p/q/r; mkdir -m 700 m1; mkdir -p -m u=rwx,g=rx m2/m3; mkdir -m a+t m4; stat -c "%a %n" m1 m2 m2/m3 m4; chmod -v g+s,o-x m1; chmod -c 600 f; ' +
    'chmod -R a-w d; stat -c "%a %n" d d/e; chmod -R u+w d; touch -d "2020-01-02 03:04:05" t1; touch -d @86400 t2; touch -d 202001020304.05 t3; ' +
    'touch -t 0102030420 t4; touch -r t1 t5; stat -c "%y %n" t1 t2 t3 t4 t5; touch -c nosuch; ls nosuch; mv f d; mv g d/e; ls d d/e; mv d/f d/e/g; ' +
    'cat d/e/g; echo c > c; mv -n c d/e/g; mv -i c d/e/g < /dev/null; echo; cat d/e/g; mkdir x; mv -T d/e x; ls x; cp -r x x/sub; echo $?; ls x x/sub; ' +
    'cp -av x y; cp -rv x/sub z; cp c y; cp -n c y/g; cp -i c y/g < /dev/null; echo; cat y/g; cp -rT x w; ls w; cp -t w c; ls w; ' +
    'printf "y\\ny\\nn\\ny\\n" | rm -ri w; echo; ls w; rm -rv w x; rm -fv nosuch; cd /; rm -r /tmp/rt-cu',
  // mkpasswd: SHA-256 (the default), SHA-512, MD5 and DES with a salt given, busybox's reading of -m, random salts by shape, stdin.
  'mkpasswd pw saltsalt; mkpasswd -m sha512 pw saltsalt; mkpasswd -m sha-512 -S abcdefgh pw; mkpasswd -m md5 pw ab12; ' +
    'mkpasswd -m md5 "a longer password of more than sixteen bytes" 12345678; mkpasswd -m des pw ab; ' +
    'mkpasswd -m sha256 pw | cut -d"$" -f3 | wc -c; mkpasswd pw | cut -c1-3; mkpasswd -m nosuch pw | cut -c1-3; mkpasswd; echo $?; ' +
    'echo pw | mkpasswd -S saltsalt; mkpasswd -S sh pw; mkpasswd -m md5 pw | cut -d"$" -f3 | wc -c; ' +
    'mkpasswd -m des pw | grep -c "^[./0-9A-Za-z]\\{13\\}$"',
  // The file programs under the shell's umask (mkdir, -p's parents, -m, touch, >, >>, cp, cp -r/-a/-p, bunzip2, dd, tee), a file
  // written over or through a symlink keeping its mode; hard links (ln, link, cp -l: counts, one content, mode and time, rm, mv,
  // a directory's 2 + subdirectories, a link to a symlink, sed -i replacing one name); a symlink loop is ELOOP ('Too many levels
  // of symbolic links') to cat, ls -L, stat -L, a trailing slash, touch, cp and chmod, where it was a missing file.
  'T="s/[A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]/T/"; mkdir /tmp/rt-fp; cd /tmp/rt-fp; umask 077; mkdir d; mkdir -p p/q/r; ' +
    'mkdir -m 755 m; touch f; echo x > r; echo y >> a; cp r c; cp -r d dd; cp -p r cp; umask 027; echo x > g; chmod 777 g; cp g h; ' +
    'mkdir e; chmod 777 e; cp -r e e2; cp -a e e3; seq 3 > s; seq 3 | bzip2 > z.bz2; chmod 755 z.bz2; bunzip2 z.bz2; dd if=s of=o 2>/dev/null; ' +
    'echo z | tee t >/dev/null; umask 0; touch zz; mkdir -p y/x; ln -s f l; echo a > f2; chmod 600 f2; echo b > f2; ln -s f2 l2; ' +
    'echo c > l2; umask; ls -lR | sed "$T"; cat f2; cd /; rm -r /tmp/rt-fp',
  'T="s/[A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]/T/"; mkdir /tmp/rt-fp; cd /tmp/rt-fp; echo a > a; ln a b; stat -c "%h %n" a b; ' +
    'echo more >> b; cat a; chmod 600 b; stat -c "%a %h" a; echo new > a; cat b; touch -d "2020-01-01 00:00" a; stat -c %y b | cut -c1-10; ' +
    'ln a c; link c d; stat -c %h a; rm b; stat -c "%h %n" a c d; mv c e; stat -c %h a e; cp a f; cp -a a g; cp -l a h; ln -s a s; ' +
    'stat -c "%h %n" a f g h s; stat -L -c %h s; stat -c %i a e | uniq | wc -l; ls -l a e h | sed "$T"; mkdir -p d1/x d1/y; stat -c %h d1; ' +
    'ln -s loop loop; ln loop lh; stat -c "%h %F" lh loop; rm lh; stat -c %h loop; echo x > s1; ln s1 s2; sed -i s/x/y/ s1; cat s2; ' +
    'stat -c %h s1 s2; cd /; rm -r /tmp/rt-fp',
  'T="s/[A-Z][a-z][a-z] [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]/T/"; mkdir /tmp/rt-fp; cd /tmp/rt-fp; ln -s loop loop; ln -s a b; ln -s b a; ' +
    'ln -s loop/x y; cat loop; echo $?; cat y; cat loop/; ls -L loop; echo $?; ls -ld loop/; ls loop; ls -l loop | sed "$T"; stat -L loop; ' +
    'echo $?; stat loop/; stat -c %F loop; touch a; echo $?; cp a c; echo $?; cp b c; chmod 600 loop; echo $?; mkdir a/x; cd /; rm -r /tmp/rt-fp',
  // find as busybox's: symlinks (-type l, -L, -follow, -H, a dangling link, a loop, a cycle through .. ended by ELOOP), its
  // expression (( ) ! -not -a -o, -name -iname -path -regex -perm -size -links -empty -newer -prune -exec ; + -print0 -quit ...)
  // and its refusals; stat -f in busybox's formats, the host disk's figures and the filesystems' IDs (6 digits and more) masked.
  'mkdir /tmp/rt-fp; cd /tmp/rt-fp; mkdir d; echo a > f; ln -s f l; ln -s d dl; ln -s nowhere n; ln -s loop loop; touch d/g; ' +
    'find . | sort; find . -type l | sort; find . ! -type l -type f | sort; find -L . 2>&1 | sort; find -L . -type l 2>/dev/null; ' +
    'find . -follow -type d 2>/dev/null | sort; find dl; find dl/ | sort; find -H dl | sort; find dl -type l; find -P dl -print0 | od -c | head -1; ' +
    'find -L . >/dev/null 2>&1; echo $?; ln -s ../d d/sub; find -L d 2>/dev/null | wc -l; find -L d >/dev/null 2>&1; echo $?; ' +
    'find -L d 2>&1 >/dev/null | grep -o sub | wc -l; cd /; rm -r /tmp/rt-fp',
  'mkdir -p /tmp/rt-fp/d/e; cd /tmp/rt-fp; touch .h a A; echo a > f; touch d/g; find . -name "*" | sort; find . -iname a | sort; ' +
    'find . -name ".*" | sort; find . -path "*h"; find . -exec echo x{}y {} \\; | sort; find . -name a -exec false \\; -print; echo $?; ' +
    'find . -name a -exec sh -c "exit 3" {} +; echo $?; find ./ -maxdepth 1 | sort; find . -maxdepth 0 -name .; ' +
    'find . -mindepth 1 -maxdepth 1 -name a -print -print; find . -empty | sort; find . -size 0 | sort; find . -size +0 | sort; find . -size -1 | sort; ' +
    'find . -user 0 -group root -name a; find . -links 3; find . -perm 644 | sort; find . -perm -u=rw -name a; find . -perm +111 | sort; ' +
    'find . -type d -o -type f -name a | sort; find . \\( -type d -o -name a \\) -print | sort; find . ! -name a ! -name A -type f | sort; ' +
    'find . -not -name f -type f | sort; find . -mindepth 2 | sort; find . -depth -name d; find nosuch; echo $?; find . -exec echo {} + | wc -w; ' +
    'find . -mtime 0 | wc -l; find . -mmin -5 | wc -l; find . -mtime +1; find . -samefile f; find d -prune; find . -name d -prune -o -print | sort; ' +
    'find . -executable | sort; find . -regex ".*/[de]" | sort; find . -regex ".*/\\(d\\|f\\)" | sort; find . -regex ".*/(d|f)"; ' +
    'find . -print -quit -print; find . -quit; echo $?; cd /; rm -r /tmp/rt-fp',
  'cd /tmp; find . -type; find . -name; find . \\( -name a; find . -name a \\) 2>&1 | head -2; find -maxdepth x; find . -newer nosuch; ' +
    'find . -links 1x; find . -type x; find . -type fd; find . -perm 9; find . -size 3z; find . -mtime x; find . -exec echo; find . -exec; ' +
    'echo $?; find . -user nosuchuser; find . -group nosuch; find . -inum x; find /tmp -maxdepth 0 !; find /tmp -maxdepth 0 -o -name a; ' +
    'find . -samefile nosuch; find -L /tmp -xdev -maxdepth 0; find /tmp -maxdepth 0 -not; find /tmp -maxdepth 0 -a; find . -delete 2>&1 | head -1; ' +
    'find / -xdev -maxdepth 1 | sort; find / -xdev -name null; find /dev -xdev -name null; find / -xdev -path "/sys/*" | wc -l',
  'M="s/[0-9a-f]\\{6,\\} */N /g"; stat -f / | sed "$M"; stat -f -t /tmp | sed "$M"; stat -fL / | sed "$M"; ' +
    'stat -f -c "%n|%l|%s|%S|%t|%T|%z|%%|%-6T|%5l|" / /proc /sys /dev /proc/self; stat -f -c "%a %b %c %d %f" /proc /sys; ' +
    'stat -f -c "%b %f %a" /dev; stat -f /proc | sed "$M"; stat -f nosuch; echo $?; ln -s /nowhere /tmp/rt-fp; stat -f /tmp/rt-fp; rm /tmp/rt-fp',
  // A user other than root (1000) refused what the kernel refuses it: writing a root file (> and >>), making an entry in a root
  // directory (touch, mkdir, >, cp, ln -s), removing or renaming there, rm in the sticky /tmp, chmod, touch of a root file,
  // a hard link to a file it may not write, rmdir of a root directory in /tmp; root makes the files first and removes them after.
  'rm -rf /tmp/rt-fp /tmp/rt-fp-sticky; umask 002; mkdir /tmp/rt-fp; echo root > /tmp/rt-fp/rootfile; touch /tmp/rt-fp-sticky; ' +
    'stat -c "%a %n" /tmp/rt-fp /tmp/rt-fp/rootfile',
  {
    user: 1000,
    script:
      'id; echo x > /tmp/rt-fp/rootfile; echo $?; echo x >> /tmp/rt-fp/rootfile; echo $?; cat /tmp/rt-fp/rootfile; touch /tmp/rt-fp/new; ' +
      'echo $?; mkdir /tmp/rt-fp/d; echo $?; echo y > /tmp/rt-fp/new2; echo $?; rm /tmp/rt-fp-sticky; echo $?; rm -f /tmp/rt-fp/rootfile; ' +
      'echo $?; mv /tmp/rt-fp/rootfile /tmp/x; echo $?; cp /etc/passwd /tmp/rt-fp/; echo $?; ls /root; echo $?; chmod 777 /tmp/rt-fp/rootfile; ' +
      'echo $?; touch /etc/passwd; echo $?; ln -s x /tmp/rt-fp/l; echo $?; ln /tmp/rt-fp/rootfile /tmp/rt-fp-hl; echo $?; rmdir /tmp/rt-fp; ' +
      'echo $?; echo mine > mine; chmod 600 mine; ls -l mine | cut -c1-10; rm mine; echo $?',
  },
  'rm -rf /tmp/rt-fp /tmp/rt-fp-sticky; ls /tmp/rt-fp-hl',
  // A user other than root refused reading and searching where the kernel refuses it: a 0600 root file (cat, head, wc, grep, cp, <, sort,
  // md5sum, od), a path through a 0700 directory, a directory it may read but not search (744), one it may search only (711), one it may not read (300).
  'rm -rf /tmp/rt-rp /tmp/rt-rp-cp; mkdir -p /tmp/rt-rp/sub /tmp/rt-rp/nox /tmp/rt-rp/noread; echo secret > /tmp/rt-rp/unread; chmod 600 /tmp/rt-rp/unread; ' +
    'echo sub > /tmp/rt-rp/sub/f; chmod 711 /tmp/rt-rp/sub; echo n > /tmp/rt-rp/nox/f; chmod 744 /tmp/rt-rp/nox; chmod 300 /tmp/rt-rp/noread; mkdir -m 700 /tmp/rt-rp/priv; echo r > /tmp/rt-rp/priv/x',
  {
    user: 1000,
    script:
      'cat /tmp/rt-rp/unread; echo $?; head -1 /tmp/rt-rp/unread; echo $?; wc -l /tmp/rt-rp/unread; echo $?; grep x /tmp/rt-rp/unread; echo $?; cp /tmp/rt-rp/unread /tmp/rt-rp-cp; echo $?; ' +
      'cat < /tmp/rt-rp/unread; echo $?; sort /tmp/rt-rp/unread; echo $?; md5sum /tmp/rt-rp/unread; echo $?; od -c /tmp/rt-rp/unread; echo $?; cat /tmp/rt-rp/priv/x; echo $?; ' +
      'ls /tmp/rt-rp/priv/x; echo $?; stat /tmp/rt-rp/priv/x; echo $?; echo > /tmp/rt-rp/priv/x; echo $?; ls /tmp/rt-rp/priv; echo $?; test -e /tmp/rt-rp/priv/x; echo $?; ' +
      'rm /tmp/rt-rp/priv/x; echo $?; realpath /tmp/rt-rp/priv/x; echo $?; ls /tmp/rt-rp/nox; echo $?; ls -l /tmp/rt-rp/nox; echo $?; cat /tmp/rt-rp/sub/f; ls /tmp/rt-rp/sub; echo $?; ' +
      'ls -l /tmp/rt-rp/noread; echo $?; find /tmp/rt-rp -name f 2>&1 | sort',
  },
  'rm -rf /tmp/rt-rp /tmp/rt-rp-cp; ls /tmp/rt-rp-cp',
  // Issue #41, the guest's /bin as the bed's busybox image has it (links to /bin/busybox, the applets' places), how a name
  // is found (which, command -v, type, a link named after an applet, a script in place of /bin/ls, a script a user may not read).
  'for d in /bin /usr/bin /sbin /usr/sbin; do ls $d | wc -l; done; ls /sbin | head -3; ls -l /bin/busybox | tr -s " " | cut -d" " -f1,5; readlink /bin/sh; readlink /usr/bin/[; test -x /bin/sh; echo $?; stat -c "%A %s %N" /bin/sh; ls /bin /usr/bin | grep -c -e "^__" -e "^alias$"',
  'which ls; command -v ls; type ls; type echo; type nosuch; echo rc=$?; command -v nosuch; echo rc=$?; command -V nosuch; echo rc=$?; which echo; which test; type ifconfig; which ifconfig; type busybox',
  'rm -f /tmp/rt-bx /tmp/ls; ln -s /bin/busybox /tmp/rt-bx; /tmp/rt-bx; echo "rc=$?"; ln -s /bin/busybox /tmp/ls; /tmp/ls -d /tmp; cd /tmp && ./ls -d /; PATH=/tmp rt-bx; echo "rc=$?"; busybox ls -d /; busybox nosuch; echo "rc=$?"; /bin/busybox ls -d /tmp; /usr/bin/env ls -d /; busybox --list | wc -l; rm -f /tmp/rt-bx /tmp/ls',
  'rm -f /bin/ls; ln -s /bin/busybox /bin/ls; rm /bin/ls; ls -d /; /bin/ls; echo "rc=$?"; which ls; echo "rc=$?"; type ls; env ls -d /; printf "#!/bin/sh\\necho mine \\$0 \\$*\\n" > /bin/ls; ls -d /; /bin/ls a b; echo "rc=$?"; chmod 755 /bin/ls; /bin/ls a b; echo "rc=$?"; which ls; rm /bin/ls; ln -s /bin/busybox /bin/ls',
  'rm -f /tmp/p; printf "#!/bin/sh\\necho hi \\$0\\n" > /tmp/p; /tmp/p; echo "rc=$?"; chmod +x /tmp/p; /tmp/p; cd /tmp; p; echo rc=$?; PATH=/tmp:$PATH; p; which p; type p; command -v p; rm /tmp/p',
  {
    user: 1000,
    script:
      'ls -l /bin/sh | cut -c1-30; /bin/busybox ls -d /; rm -f /tmp/rt-by /tmp/rt-bq /tmp/rt-bq1; ln -s /bin/busybox /tmp/rt-by; /tmp/rt-by; echo rc=$?; printf "#!/bin/sh\\necho u\\n" > /tmp/rt-bq; chmod 700 /tmp/rt-bq; /tmp/rt-bq; ' +
      'printf "#!/bin/sh\\necho u\\n" > /tmp/rt-bq1; chmod 100 /tmp/rt-bq1; /tmp/rt-bq1; echo rc=$?; /bin/ls -d /; rm -f /tmp/rt-by /tmp/rt-bq /tmp/rt-bq1',
  },
  'rm -rf /tmp/rt-w7; mkdir /tmp/rt-w7; cd /tmp/rt-w7; touch z; mkdir -p d/zz; PATH=/tmp/rt-w7:$PATH which z; echo rc=$?; which /tmp/rt-w7/z; echo rc=$?; chmod +x z; PATH=/tmp/rt-w7:$PATH which z; echo rc=$?; which ./z; echo rc=$?; which; echo rc=$?; which -a sh ls; PATH=/tmp/rt-w7:/tmp/rt-w7/d which zz; echo rc=$?; which nosuch ls; echo rc=$?; PATH= which z; (unset PATH; which ls); cd /tmp; PATH=rt-w7 which z; rm -rf /tmp/rt-w7',
  // Issue #41, output order: one program's own two streams under 2>&1 in the order it wrote them (busybox flushes stdout before
  // each message), through a pipe, a file and $(…), over 4 KiB; exec 2>&1 points stderr at the shell's stdout as it was then.
  'rm -rf /tmp/rt-so; mkdir /tmp/rt-so; cd /tmp/rt-so; echo a > f1; echo b > f2; mkdir d1; cat f1 /nosuch f2 2>&1 | cat; wc f1 /nosuch f2 >o 2>&1; cat o; ls /nosuch d1 f1 2>&1 | cat; ' +
    'head -n1 f1 /nosuch f2 2>&1 | cat; du -c f1 /nosuch f2 2>&1; md5sum /nosuch f1 2>&1 | cat; grep a /nosuch f1 2>&1 | cat; stat -c %n /nosuch f1 2>&1 | cat; find /nosuch d1 2>&1 | cat; ' +
    'tar cvf t.tar /nosuch f1 2>&1 | cat; x=$(cp -v f2 /nosuch d1 2>&1); echo "$x"; mkdir -v d2 /nosuch/a d3 2>&1 | cat; rm -v f1 /nosuch 2>&1 | cat; ' +
    'i=0; while [ $i -lt 700 ]; do echo "line $i"; i=$((i+1)); done > big; cat big /nosuch big 2>&1 | grep -n nosuch; cd /; rm -rf /tmp/rt-so',
  {
    user: 1000,
    script:
      'rm -rf /tmp/rt-sou; mkdir /tmp/rt-sou; cd /tmp/rt-sou; echo a > f1; echo b > f2; mkdir d1; cat f1 /nosuch f2 2>&1 | cat; wc f1 /nosuch f2 >o 2>&1; cat o; ls /nosuch d1 f1 2>&1 | cat; ' +
      'x=$(cp -v f2 /nosuch d1 2>&1); echo "$x"; rm -v f1 /nosuch 2>&1 | cat; cd /; rm -rf /tmp/rt-sou',
  },
  'exec 2>&1; ls /nosuch | wc -l; { echo a; ls /nosuch2; echo b; } > /tmp/rt-so-g; echo --; cat /tmp/rt-so-g; x=$(ls /nosuch3); echo "[$x]"; echo e >&2 | wc -l; ls /nosuch4 2>&1 | wc -l; rm /tmp/rt-so-g',
  'exec 2>/tmp/rt-so-e; ls /nosuch | wc -l; echo ---; cat /tmp/rt-so-e; rm /tmp/rt-so-e',
  // Issue #41, the shell (permission, environment, aliases, messages; their scripts recorded on LXD 5.0.2): cd a user may not
  // search, test -r/-w/-x for the user who asks, sh FILE and . FILE it cannot open, cmd < DIR, env the exported environment,
  // an alias from the next line, builtins' refusals, export -p, a script's messages named after its $0.
  'rm -rf /tmp/rt-hs; mkdir -p /tmp/rt-hs/priv/sub /tmp/rt-hs/sd; chmod 700 /tmp/rt-hs/priv; mkdir -m 711 /tmp/rt-hs/s711; mkdir -m 300 /tmp/rt-hs/d300; mkdir -m 000 /tmp/rt-hs/d000; cd /tmp/rt-hs; echo a > f000; chmod 000 f000; echo a > f700; chmod 700 f700; echo > f604; chmod 604 f604; echo > f001; chmod 001 f001; echo > f010; chmod 010 f010; echo > f460; chmod 460 f460; chown 1000:1000 f460; echo > g046; chmod 046 g046; chgrp 1000 g046; echo "echo in-s; exit 3" > s600; chmod 600 s600; echo "echo in" > s644; echo "cd /nosuch" > l.sh',
  {
    user: 1000,
    script:
      'cd /tmp/rt-hs/priv; echo "$? $PWD"; cd /tmp/rt-hs/d300; echo "$? $PWD"; cd /tmp/rt-hs/s711; echo "$? $PWD"; cd /tmp/rt-hs/priv/sub; echo "$? $PWD"; cd /tmp/rt-hs/nosuch; echo $?; cd /tmp/rt-hs/f700; echo $?; cd /tmp/rt-hs/priv/../sd && echo "$PWD"; cd /etc/passwd/.. && echo "$PWD"',
  },
  { user: 1000, script: 'echo $LINENO\ncd /nosuch\nf() { cd /tmp/rt-hs/priv; }\nf; . /tmp/rt-hs/l.sh; echo $LINENO' },
  'cd /tmp/rt-hs/priv && cd /tmp/rt-hs/d000 && pwd',
  'cd /tmp/rt-hs; for f in f000 f700 f604 f001 f010 f460 g046 d000 priv priv/sub nosuch; do printf "%s " $f; test -r $f && printf r || printf -; [ -w $f ] && printf w || printf -; [[ -x $f ]] && printf x || printf -; echo; done',
  {
    user: 1000,
    script:
      'cd /tmp/rt-hs; for f in f000 f700 f604 f001 f010 f460 g046 d000 priv priv/sub nosuch; do printf "%s " $f; test -r $f && printf r || printf -; [ -w $f ] && printf w || printf -; [[ -x $f ]] && printf x || printf -; echo; done',
  },
  {
    user: 1000,
    script:
      'sh /tmp/rt-hs/s600; echo $?; sh /tmp/rt-hs/nosuch; echo $?; sh /tmp/rt-hs/priv/sub; echo $?; sh /tmp/rt-hs/sd; echo $?; sh /tmp/rt-hs/s644; echo $?',
  },
  { user: 1000, script: '. /tmp/rt-hs/s600; echo after' },
  { user: 1000, script: 'echo\nsource /tmp/rt-hs/nosuch; echo after' },
  { user: 1000, script: 'cd /tmp/rt-hs; . s644; echo after' },
  { user: 1000, script: '(. /tmp/rt-hs/s600); echo "$?"; . /tmp/rt-hs/sd; echo "$?"' },
  'rm -rf /tmp/rt-hs; ls /tmp/rt-hs',
  'cat < /tmp; echo "rc=$?"; wc < /tmp; echo "rc=$?"; wc -l < /tmp; echo "rc=$?"; head < /tmp; echo "rc=$?"; head -c 3 < /tmp; echo "rc=$?"; tail < /tmp; echo "rc=$?"',
  'sort < /tmp; echo "rc=$?"; grep x < /tmp; echo "rc=$?"; read x < /tmp; echo "rc=$? x=$x"; md5sum < /tmp; echo "rc=$?"; od < /tmp; echo "rc=$?"; tr a b < /tmp; echo "rc=$?"',
  'sed p < /tmp; echo "rc=$?"; uniq < /tmp; echo "rc=$?"; cut -c1 < /tmp; echo "rc=$?"; awk 1 < /tmp; echo "rc=$?"; tee < /tmp; echo "rc=$?"; base64 < /tmp; echo "rc=$?"; sha256sum < /tmp; echo "rc=$?"',
  'cat - < /tmp; echo "rc=$?"; true < /tmp; echo "rc=$?"; echo hi < /tmp; echo "rc=$?"; cat < /tmp/; echo "rc=$?"; cat 0< /tmp; echo "rc=$?"; wc -l /etc/passwd < /tmp | cut -c1-2; { cat; } < /tmp; echo "rc=$?"; cat < /tmp | wc -c',
  'dd < /tmp 2>&1; echo "rc=$?"; tac < /tmp; echo "rc=$?"; cat <> /tmp; echo "rc=$?"; test -d /tmp && echo dir; sh < /tmp; echo "rc=$?"',
  'rm -rf /tmp/rt-hs4; mkdir -m 700 /tmp/rt-hs4',
  { user: 1000, script: 'cat < /tmp; echo "rc=$?"; wc -c < /tmp; echo "rc=$?"; cat < /tmp/rt-hs4; echo "rc=$?"' },
  'rm -rf /tmp/rt-hs4',
  'X=1; export Y=2; env | grep -E "^(X|Y|PWD|SHLVL|HOME|[?])=" | sort',
  'env Z=1 sh -c \'echo "Z=$Z"\'; env -i A=1 env; env -u HOME env | grep -c HOME; env - W=2 env; env -u HOME sh -c \'echo "[$HOME]"\'',
  'X=1 env | grep ^X; X=1 sh -c \'echo "X=$X"\'; echo "[$X]"',
  'A=1; sh -c \'echo "[$A]"\'; export A; sh -c \'echo "[$A]"\'; sh -c \'sh -c "echo \\$A"\'; unset A; env | grep -c ^A=',
  'f() { local L=1; export L; env | grep ^L=; }; f; env | grep -c ^L=',
  { user: 1000, script: 'env | grep -E "^(B|PWD|SHLVL|HOME|[?])=" | sort; set -a; B=1; env | grep ^B; sh -c \'echo "[$B]"\'' },
  'alias x=echo; x hi; echo "rc=$?"',
  'alias x=echo\nx hi',
  'alias x=echo && x hi; echo "rc=$?"\nx there',
  'if true; then alias y=echo; y a; fi; y b\ny c',
  'f() { alias z=echo; }; f; z a\nz b',
  'alias x=echo; eval x hi',
  'alias x=echo\nf() { x in-f; }; unalias x; f; x gone',
  'alias q=\'echo one;\' ; q x\nq y; echo "rc=$?"',
  'command . /tmp/nosuch; echo "rc=$?"; command source /tmp/nosuch; echo "rc=$?"; . /tmp/nosuch; echo after',
  'trap \'env | grep -E "^(X|Y)="; sh -c "echo [\\$X\\$Y]"\' EXIT; X=1; export Y=2',
  'trap \'env | grep -E "^(X|Y)="\' EXIT; X=1; export Y=2; exit 3',
  // The EXIT trap sees the status the shell ends with as $?; a command's prefix assignments are made after its words are expanded.
  'trap \'echo "trap rc=$?"\' EXIT; sh -c \'trap "echo in \\$?" EXIT; exit 4\'; echo "rc=$?"; false',
  // The EXIT trap runs with the shell's options (set -x traces it) and its $- letters.
  'set -eu; trap \'echo "[$-]"; set -x; echo t\' EXIT; set -x; exit 4',
  'sh -c \'set -x; trap "echo in \\$-" EXIT; true\'; echo "rc=$?"',
  // set -x quotes as ash: a word with a character outside + , - . / 0-9 : @ A-Z ] ^ _ a-z in single
  // quotes (a quote itself in double quotes), a reserved word always, an empty word as nothing.
  `set -x; echo if in "a b" "it's" "" '*' '~' x=1 é "'a" "a'" "a''b" ']]' '%' ',' 'A^_'; v="a b"; w=; echo done`,
  'x=3 echo "[$x]"; y=1; y=2 sh -c \'echo $y\'; echo $y; w=1 w=$((w+1)) sh -c \'echo $w\'; z=5 true; echo "${z:-unset}"',
  // $- in ash's letters and order: how the shell reads its script (c, s), then the options.
  'echo "[$-]"; sh -c \'echo "[$-]"\'; echo \'echo "[$-]"\' | sh; set -Cfa; echo "[$-]"; set -eux; echo "[$-]"',
  // history is a builtin that lists nothing without a terminal.
  'history; echo "rc=$?"; history -c; echo "rc=$?"; type history',
  'cd /etc/passwd/x; echo $?; cd /nosuch/x; echo $?; ln -s /tmp /tmp/rt-hs-l; cd /tmp/rt-hs-l && pwd; cd -P /tmp/rt-hs-l && pwd; ln -s rt-hs-loop /tmp/rt-hs-loop; cd /tmp/rt-hs-loop; echo $?; rm /tmp/rt-hs-l /tmp/rt-hs-loop',
  'rm -f /tmp/rt-hs-f /tmp/rt-hs-fl; echo x > /tmp/rt-hs-f; chmod 600 /tmp/rt-hs-f; ln -s /tmp/rt-hs-f /tmp/rt-hs-fl',
  {
    user: 1000,
    script:
      'test -r /tmp/rt-hs-fl; echo $?; test -w /tmp/rt-hs-fl; echo $?; test -r /tmp; echo $?; test -w /tmp; echo $?; test -x /tmp; echo $?; test -w /dev/null; echo $?',
  },
  'rm -f /tmp/rt-hs-f /tmp/rt-hs-fl',
  'echo\numask xyz; trap x BAD',
  'ulimit -z; echo "rc=$?"; ulimit -n abc; echo "rc=$?"; ulimit -Hz; echo "rc=$?"; ulimit -f 10 extra; echo "rc=$?"',
  "export A=\"it's\" B='' D=\"a''b\"; export -p | grep -E '^export (A|B|D|HOME|PATH)='; export | grep -c '^export HOME='",
  'printf "echo a\\nnosuch\\ncd /nosuch\\n/bin/nope\\n. /nosuch2\\necho after\\n" > /tmp/l2.sh; sh /tmp/l2.sh; echo "rc=$?"; cd /tmp; sh l2.sh; echo "rc=$?"',
  'printf "echo \\$LINENO\\nnosuch\\n" > /tmp/l3.sh; sh /tmp/l3.sh 2>&1; sh < /tmp/l3.sh; nosuch; /bin/nope; echo "rc=$?"',
  'printf "sh -c nosuch\\nsh -c \\"nosuch2\\" myname\\nnosuch3\\ncd /nosuch\\n" > /tmp/l4.sh; chmod +x /tmp/l4.sh; sh /tmp/l4.sh; /tmp/l4.sh; cd /tmp; ./l4.sh; . ./l4.sh; echo end',
  'printf "echo\\numask xyz\\nulimit -n abc\\n" > /tmp/l5.sh; sh /tmp/l5.sh; echo "rc=$?"; umask xyz',
  // tail, head, wc, gzip, du and tar as busybox: what they cannot open, a file of several names, modes and links restored.
  'rm -rf /tmp/lp; mkdir -p /tmp/lp; cd /tmp/lp; ln -sf l2 l1; ln -sf l1 l2; echo x > g; head l1 g; wc -l l1 g; tail l1; echo "rc=$?"',
  'rm -rf /tmp/tl; mkdir -p /tmp/tl; echo hello > /tmp/tl/f; chmod 600 /tmp/tl/f; echo x > /tmp/tl/g',
  { user: 1000, script: 'cd /tmp/tl; tail f; echo "rc=$?"; tail g f; echo "rc=$?"' },
  'rm -rf /tmp/gz; mkdir -p /tmp/gz; cd /tmp/gz; echo hello > f; chmod 640 f; gzip f; stat -c "%n %a" f.gz; gunzip f.gz; stat -c "%n %a" f; chmod 644 f; umask 077; gzip f; stat -c "%n %a" f.gz',
  'rm -rf /tmp/gu; mkdir -p /tmp/gu; chmod 777 /tmp/gu; echo z > /tmp/gu/u; chmod 600 /tmp/gu/u',
  { user: 1000, script: 'cd /tmp/gu; gzip u; echo "rc=$?"' },
  'cd /tmp; echo notgz > n.gz; gunzip n.gz; echo "rc=$?"; printf "\\037\\213\\010\\000" | gunzip; echo "rc=$?"; echo hello | gzip | head -c 15 | gunzip; echo "rc=$?"; echo hello | gzip | od -An -tx1; rm -f n.gz',
  'rm -rf /tmp/u; mkdir -p /tmp/u/d; cd /tmp/u; echo aaaa > d/a; ln d/a d/b; head -c 10000 /dev/zero > d/big; ln d/big d/big2; mkdir d/no; echo x > d/no/x; chmod 700 d/no; du -s d; du d/a d/b; du -a d/no; du -c d d; du -sh d',
  { user: 1000, script: 'cd /tmp/u; du -s d; echo $?; du nosuch; echo $?' },
  'mkdir -p /tmp/u/q/s; cd /tmp/u; echo x > q/s/x; printf 12345 > q/a; du -m q; du -b q; du -d 0 q; du -bh q',
  'rm -rf /tmp/dt; mkdir /tmp/dt; cd /tmp/dt; mkdir s; echo a > s/a; chmod 640 s/a; ln s/a s/hl; ln -s a s/sym; mkdir s/sub; chmod 750 s/sub; tar cf ar.tar s/a s/hl s/sym s/sub; tar tvf ar.tar | sed "s/ 20[0-9-]* [0-9:]* / DATE /"; mkdir x; cd x; umask 077; tar xf ../ar.tar; stat -c "%n %a %h" s s/a s/hl s/sub; readlink s/sym',
  {
    user: 1000,
    script:
      'chmod -R u+rwx /tmp/du2 2>/dev/null; rm -rf /tmp/du2; mkdir /tmp/du2; cd /tmp/du2; mkdir s; echo a > s/a; chmod 640 s/a; mkdir s/sub; chmod 750 s/sub; tar cf ar.tar s/a s/sub; mkdir x; cd x; umask 077; tar xf ../ar.tar; stat -c "%n %a" s s/a s/sub; cd ..; echo z > un; chmod 000 un; tar cf u.tar un; echo "rc=$?"; mkdir ud; chmod 000 ud; tar cf ud.tar ud; echo "rc=$?"; tar tf ud.tar; tar cf m.tar nosuch; echo "rc=$?"; chmod 000 u.tar; tar tf u.tar; echo "rc=$?"',
  },
  'rm -rf /tmp/lp /tmp/tl /tmp/gz /tmp/gu /tmp/u /tmp/dt /tmp/du2',
  'cd /tmp; rm -rf dd1; mkdir -p dd1; echo a > fa; head dd1; echo "rc=$?"; tail dd1; echo "rc=$?"; wc dd1 fa; echo "rc=$?"; wc -l dd1; rm -rf dd1 fa',
  'cd /tmp; printf "1\\n2\\n3\\n" > t3; tail +2 t3; for n in 0 1 3 6 7; do tail -c +$n t3 | od -An -c; done; echo x | tail -n 1 -',
  'cd /tmp; printf "1\\n2\\n3\\n" > h3; printf "ab\\ncd" > h2; head -n -1 h3; head -c -2 h3 | od -An -c; head -q h3 h2; echo; echo x | head -n 1 - h2; echo; head -n 1k h3 | wc -l; head -c 1b h3 | wc -c; head -n x h3; echo $?',
  'cd /tmp; printf "1\\n2\\n3\\n" > t3; printf "ab\\ncd" > t2; printf "a\\tbc\\n\\ttoo long line  \\nx\\vyz\\rq\\n\\001\\002 w\\351\\n" > w4; wc -L t3; wc -lL t2 t3; wc -lwmcL w4; printf "  a b\\n" | wc -wL -; rm -f t3 t2 w4 h3 h2',
  // Programs that write bytes print UTF-8 as it is; the decompressors' words for a file they cannot open; gzip of a directory; xargs on no input.
  'cd /tmp; rm -f u u.bz2; printf "\\303\\251\\n" > u; bzip2 -k u; bzcat u.bz2; printf "a\\303\\251\\r\\n" | dos2unix; rm -f u u.bz2',
  'rm -rf /tmp/p; mkdir -p /tmp/p; chmod 777 /tmp/p; cd /tmp/p; echo hi > a.bz2; echo hi > a.gz; chmod 600 a.bz2 a.gz',
  { user: 1000, script: 'cd /tmp/p; bunzip2 nosuch a.bz2; echo rc=$?; zcat a.gz; echo rc=$?; unxz a.bz2; echo rc=$?' },
  'cd /tmp; rm -rf g1 g1.gz b1 b1.bz2 /tmp/p; mkdir g1; chmod 700 g1; gzip g1; echo rc=$?; ls -d g1*; stat -c %a g1.gz; wc -c < g1.gz; mkdir b1; bzip2 b1; echo rc=$?; ls -d b1*; rm -rf g1 g1.gz b1',
  'printf "" | xargs echo hi; echo rc=$?; printf "" | xargs -r echo hi; echo rc=$?; printf "" | xargs false; echo rc=$?',
  // Raw bytes beside a redirected stderr; the shell's messages named sh wherever they go; subshells, pipeline stages and $(…) with
  // their own umask, directory and traps; env -i's PATH and SHLVL; export of a name without a value; line numbers after #!.
  "cd /tmp; printf 'hi\\n' > f; bzip2 -c f nosuch 2>/dev/null | bzcat; echo \"a $?\"; { gzip -c f nosuch 2>/dev/null; } | zcat; (bzip2 -c f nosuch 2>/tmp/e) | bzcat; cat /tmp/e; { printf '\\377'; cat nosuch; printf '\\376'; } 2>/dev/null | od -An -tx1; rm -f f /tmp/e",
  'sh -c nosuchcmd 2>&1; nosuchcmd 2>/tmp/e; cat /tmp/e; x=$(nosuch 2>&1); echo "x=$x"; sh -c "nosuch 2>&1" NAME; rm -f /tmp/e',
  '(umask 077; umask; cd /tmp; trap "echo t" EXIT; pwd); umask; pwd; (trap "echo t2" EXIT; exit 3); echo "rc=$?"; (trap "echo t3" INT; trap); trap "echo outer" EXIT; (echo sub; trap); echo end',
  'rm -f /tmp/m1 /tmp/m2; (umask 077; touch /tmp/m1); touch /tmp/m2; ls -l /tmp/m1 /tmp/m2 | cut -c1-10; rm -f /tmp/m1 /tmp/m2',
  'env -i sh -c "echo \\$PATH; env"; sh -c "echo \\$SHLVL"; SHLVL=abc sh -c "echo \\$SHLVL"',
  'export C; echo "${C-unset}"; env | grep -c "^C="; sh -c "echo \\${C-unset2}"; export -p | grep " C"; C=; export -p | grep " C"; export E; E=3; env | grep ^E=',
  "printf '#!/bin/sh\\necho $LINENO\\nnosuch\\n' > /tmp/s; chmod +x /tmp/s; /tmp/s; sh /tmp/s; . /tmp/s",
  'cd /root; umask 077 | cat; umask; x=$(umask 027; umask); echo "x=$x"; umask; cd /tmp | cat; pwd; trap \'echo t\' EXIT | cat; echo end; x=$(trap \'echo in\' EXIT; echo a); echo "x=$x"',
  { user: 1000, script: '(umask 077; umask); umask; nosuch 2>&1' },
  // Three times per file (ls -c/-u, relatime, find -atime/-ctime, touch -a); a trap on a signal the shell sends itself.
  'rm -rf /tmp/rt-ls; mkdir /tmp/rt-ls && cd /tmp/rt-ls && echo 1 > a && echo 2 > b && touch -d "2020-01-01 00:00:00" a && touch -d "2021-01-01 00:00:00" b && echo u; ls -u; ls -lu --full-time a; echo t; ls -t; sleep 1; chmod 600 a; echo c; ls -c; ls -lc | awk \'{print $1, $NF}\'; ls -tcu; ls -tuc; cd /tmp; rm -rf /tmp/rt-ls',
  'cd /tmp; echo x > rt-t; sleep 1; cat rt-t >/dev/null; a1=$(stat -c %X rt-t); m1=$(stat -c %Y rt-t); cat rt-t > /dev/null; a2=$(stat -c %X rt-t); [ $a1 -gt $m1 ] && [ $a1 = $a2 ] && echo relatime; sleep 1; chmod 600 rt-t; [ $(stat -c %Z rt-t) -gt $(stat -c %Y rt-t) ] && echo ctime; touch -d @1000000000 rt-t; find /tmp/rt-t -mtime -1; echo m; find /tmp/rt-t -ctime -1; find /tmp/rt-t -atime -1; touch -a -d @1100000000 rt-t; stat -c "%X %Y" rt-t; rm rt-t',
  "trap 'echo got' USR1; kill -USR1 $$; echo after",
  "trap 'echo got; exit 3' TERM; kill $$; echo after",
  "trap '' USR1; kill -USR1 $$; echo after",
  "trap 'echo hup' HUP; echo a; kill -HUP $$; echo b; kill -1 $$; echo c",
  "trap 'echo got $?' USR2; false; kill -USR2 $$; echo rc=$?",
  "trap 'echo int' INT; (kill -INT $$); echo after",
  "trap 'echo t' USR1; killall -USR1 sh; echo after",
  "trap 'echo e' EXIT; trap 'echo u' USR1; kill -USR1 $$; echo after",
  "f() { kill -USR1 $$; echo in-f; }; trap 'echo t' USR1; f; echo after",
  'kill -USR1 $$; echo after',
  "trap 'echo t' USR1; echo $(kill -USR1 $$; echo sub); echo after",
  "trap 'echo t' TERM; kill -TERM $$ & wait; echo after",
  "set -e; trap 'echo t' USR1; kill -USR1 $$ && echo ok; kill 99999 2>/dev/null && echo no; echo end",
  "trap 'echo c' CHLD; kill -CHLD $$; echo after; trap 'echo cont' CONT; kill -CONT $$; echo end",
  // bc (issue #41 item 5): what scripts ask of it (scale, -l, big powers, obase/ibase, the 70-column wrap), bc's number rules.
  'echo "scale=2; 10/3" | bc; echo "s(1)" | bc -l; echo "2^100" | bc; echo "2^300" | bc; echo "obase=16; 255" | bc; ' +
    'echo "obase=16; 2^300; -255; 10.75; .5" | bc; echo "obase=100; 12345678" | bc; echo "obase=2; -5.75" | bc; ' +
    'echo "ibase=16; FF; A; ZZ; 1.8; obase=A; 10" | bc; echo "0.00; 1.50-1.50; -0; .5; 1.000; scale=3; 1/3*3; -2/3; 7%3; ' +
    '-7%3" | bc; echo "-2^2; 2^3^2; 1.5^2; scale=3; 1.123*1.123; 2^-3; sqrt(10); length(0.001); scale(1.234); x=5; x++; x; ' +
    'x^=2; x; a[3]=7; a[3]+a[2]; last; (x=2)" | bc',
  // bc programs: functions (recursion, arrays, auto), loops, print and its escapes, strings, if/else, quit at parse time, files then stdin.
  'echo "define f(n) { if (n<2) return (1); return (n*f(n-1)); }; f(30); define g(a[], n) { auto i, s; for (i=0; i<n; ' +
    'i++) s += a[i]; return (s); }; x[0]=1; x[1]=2; g(x[], 2)" | bc; ' +
    'printf \'define h(x) {\\n  auto y\\n  y = x + 1\\n  return (y)\\n}\\nh(h(1))\\ni = 0\\nwhile (i < 5) {\\n  i += 1\\n  if (i == 2) continue\\n  if (i == 4) break\\n  print i, "-"\\n}\\nprint "\\\\t|\\\\q|\\\\n", 1.5, "\\\\n"; ' +
    '"raw\\\\n"; if (0) 5 else 6; 1; quit; 2\\n\' | bc; echo limits | bc; echo "x = 2 /* c */ + 1; x # t" | bc; ' +
    "printf '1+1\\n2*\\n' > /tmp/rt-g.bc; bc /tmp/rt-g.bc </dev/null; echo $?; echo 5 | bc /tmp/rt-g.bc; " +
    'echo 5 | bc -q /dev/null; rm /tmp/rt-g.bc',
  // bc's refusals (each ends bc with 1, the output before it kept), -s and -w on extensions, BC_LINE_LENGTH; ibase up to 36.
  'echo "1/0" | bc; echo $?; echo "1+; 2" | bc; printf \'1\\n2+\\n3\\n\' | bc; echo "(((1)" | bc; echo "1)" | bc; ' +
    'echo "X=1" | bc; echo "@" | bc; echo \'"abc\' | bc; echo "/* x" | bc; echo "return 1" | bc; echo "f(1)" | bc; ' +
    'echo "define f(x) { return (x); }; f(1, 2)" | bc; echo "sqrt(-1); 2^0.5" | bc; echo "obase=1" | bc; echo "ibase=17" | bc; ' +
    'echo "ibase=20; JJ; 1.J; 10; ibase=37" | bc; dc -e "20 i FF p 37 i"; echo "scale=-1" | bc; echo "break" | bc; echo "a[1]; ' +
    'b[]" | bc; echo "--1" | bc; echo "1 print 2" | bc; printf \'if (1)\\n\\n5\\n\' | bc; bc /nonexistent; echo $?; bc -z; echo $?; ' +
    'echo "x==1" | bc -s; echo $?; echo "print 1; abc=1; a && b; 1 # c; .+1" | bc -w; echo 2^300 | BC_LINE_LENGTH=20 bc; ' +
    'echo 2^300 | BC_LINE_LENGTH=0 bc',
  // bc -l: busybox's math library (s c a l e j) at scale 20 and 50 and 5.
  'echo "s(1); c(1); a(1); l(2); e(1); j(2,3); scale=50; 4*a(1); scale=5; e(10); l(100); s(-1); a(-1); e(-1); c(0); l(0); scale" | bc -l',
  // dc: arithmetic, ~ | v, bases, p n f P a, registers and their stacks, arrays, macros, conditions with else, q and Q, -e in order.
  'echo "3 4 + p" | dc; dc -e "2 3 ^ p"; dc -e "10 3 / p 2 k 10 3 / p 10 3 % p 10 3 ~ f c _5 p 2 v p K p 2 10 7 | p"; ' +
    'dc -e "16 o 255 p 16 i FF p A p I p O p c 1 d + p 1 2 r f c 5 sa la p 3 Sb 4 Sb Lb p Lb p c"; ' +
    'dc -e "[hello]p [world]n [x]P 65 P 16706 P 65 a p [hi] a p c z p 123.456 Z p X p [abc] Z p"; ' +
    'dc -e "[1p]sa [2p]sb 2 1>aeb 1 2>aeb 2 3 [[yes]p]sy <y 3 2 <y 2 2 =y 3 2 !<y"; dc -e "3 [d 1 - d 0 <a] d sa x f"; ' +
    'dc -e "[[1p 3Q 2p]x 4p]x 5p"; dc -e "1 2 q 3 p"; dc -e "2 300 ^ p"; dc -e "1 2 :a 2 ;a p" -e "1 p"',
  // dc's refusals and messages, files (with FILE:LINE: in the message) and -f, P's bytes, DC_LINE_LENGTH.
  'dc -e "p"; echo $?; dc -e "1 0 / p"; dc -e "_3 v"; dc -e "2 0.5 ^"; dc -e "0 i"; dc -e "1 o"; dc -e "Lq"; dc -e "g"; ' +
    'dc -e "1 2 >a"; dc -e "5 _ p"; dc -e "[abc"; dc -e "s"; dc /nosuch; echo $?; dc -h; echo $?; ' +
    'echo "1 2 + p" > /tmp/rt-d.dc; dc /tmp/rt-d.dc; dc -f /tmp/rt-d.dc; printf \'1 p\\n3 g\\n\' > /tmp/rt-d.dc; dc /tmp/rt-d.dc; ' +
    'echo $?; rm /tmp/rt-d.dc; dc -e "0 P 256 P 65.7 P 255 a P" | od -c; dc -e "_66 P"; DC_LINE_LENGTH=10 dc -e "2 100 ^ p"',
  // bc and dc: --help, -v and --version, long options, -i, -x, the forms of -e, --.
  'bc --help; echo $?; dc --help; echo $?; bc -v; echo $?; bc --version; echo 1 | bc -i; echo $?; ' +
    'echo 1 | bc --quiet --mathlib; dc -x -e "1p"; dc -e; echo $?; dc -xe "2p"; dc -e"3p"; busybox bc -q </dev/null; bc -- /dev/null </dev/null; echo $?',
  // bc's environment: BC_ENV_ARGS (its files first, its options lost, as busybox's getopt32 drops them), POSIXLY_CORRECT.
  'echo "s(1)" | BC_ENV_ARGS="-l -q" bc; echo 5 > /tmp/rt-e.bc; echo 1 | BC_ENV_ARGS=/tmp/rt-e.bc bc; echo "x==1" | POSIXLY_CORRECT=1 bc; echo $?; rm /tmp/rt-e.bc',
  // bc's read() and dc's ?: the next line of stdin (the one after the running statement when stdin is the program), its refusals.
  "printf 'x=read()\\n5\\nx\\n' | bc; echo $?; printf 'x=read(); x*2\\n' > /tmp/rt-r.bc; echo 7 | bc /tmp/rt-r.bc; " +
    'echo "3+4" | bc /tmp/rt-r.bc; echo "x" | bc /tmp/rt-r.bc; bc /tmp/rt-r.bc </dev/null; echo $?; ' +
    'printf \'read()+read()\\n1\\n2\\n\' | bc; printf \'? p\\n5 6 + \\n\' | dc; echo "2 3" | dc -e "? + p"; rm /tmp/rt-r.bc; ' +
    "printf 'read()\\n1 2\\n' | bc; printf 'read()\\n\\n' | bc; printf 'read()\\n1/0\\n' | bc; echo 'read()' > /tmp/rt-r.bc; " +
    "echo '(' | bc /tmp/rt-r.bc; printf 'read(); 9\\n4\\n' | bc; printf '1 ?\\n2 p\\n3 p\\n' | dc; rm /tmp/rt-r.bc",
  // bc's loops (continue in for, break in nested loops, empty bodies), blocks across lines, functions' refusals, the input ending in a block.
  'echo "for (i=0; i<5; i++) { if (i==2) continue; i }" | bc; echo "for (i=0; i<3; i++) for (j=0; j<3; ' +
    'j++) { if (j==1) break; i*10+j }" | bc; echo "i=0; while (i++ < 3); i" | bc; echo "for (;;) { n += 1; if (n > 2) break }; ' +
    'n" | bc; echo "x=1; if (x) { } else { 2 }; if (!x) 3 else { 4; 5 }" | bc; printf \'for (i = 0; i < 2; ' +
    'i++)\\n  i\\nwhile (i < 4)\\n{\\n  i++\\n}\\n\' | bc; echo "define f() { for (i=0; i<3; i++) if (i == 1) return (i); ' +
    'return (9) }; f()" | bc; echo "define void g() { print 7 }; g(); 8" | bc; echo "define f(x) { return x }; f(2)" | bc -s; ' +
    'echo "auto" | bc; echo "define f(x, x) { }" | bc; echo "define f(a, b) { auto c, a }" | bc; echo "define f(x" | bc; ' +
    'echo "define f(x) {" | bc; printf \'define f(x)\\n{\\nreturn (x*2)\\n}\\nf(4)\\n\' | bc; ' +
    'printf \'define f(x)\\n{\\nreturn (x*2)\\n}\\nf(4)\\n\' | bc -w; echo "{ 1" | bc; echo "{ 1;" | bc; echo "while (1) {" | bc; ' +
    'echo "define f(x) {" | bc; echo "define f(x) { 1 " | bc; printf \'{\\n1\\n\' | bc; echo "if (1) {" | bc',
  // bc and dc at hundreds of digits: sqrt (busybox's truncation), -l's functions at scale 200.
  'echo "scale=400; sqrt(2); sqrt(15241578750190521); sqrt(0.25); sqrt(99); scale=0; sqrt(99); sqrt(100); sqrt(1); ' +
    'sqrt(0.5); scale=3; sqrt(0.001); sqrt(123.456); sqrt(1000000.000001); scale=1; sqrt(0.01)" | bc; echo "scale=200; e(50); ' +
    'l(12345); s(100); c(0.5); a(0.3); j(5, 7.5)" | bc -l; dc -e "100 k 2 v p 0.5 v p 3 k 99 v p"',
  // uncompress, unlzma, lzcat, lzma -d, lzop (issue #41 item 5): .Z files made on the host (codes of 9 to 11 bits), files, stdin,
  // -c -f, the refusals, data cut short or corrupt (what is written before the message); LZMA-alone files, -k -t -v, bad headers, a
  // stream cut short (fatal: the output file stays, later files are not read), corrupt data; lzop's bytes (levels, -C, -F, blocks
  // of 256 KiB), keeping input unless -U, -d to FILE.out, -v's percentages, and every message of its decompression.
  `mkdir /tmp/rt-lz; cd /tmp/rt-lz; echo ${zSmall} | base64 -d > h.Z; echo ${zFile} | base64 -d > m.Z; ` +
    `uncompress -c h.Z; uncompress -c m.Z | md5sum; uncompress < m.Z | tail -1; head -c 12 h.Z | uncompress; echo; ` +
    `head -c 1000 m.Z | uncompress | wc -c; cp h.Z a.Z; uncompress a.Z; echo $?; ls; cat a; cp h.Z a.Z; uncompress a.Z; ` +
    `echo $?; uncompress -f a.Z; echo $?; ls; cp h.Z p.Z; chmod 600 p.Z; uncompress p.Z; stat -c "%a %n" p; ` +
    `uncompress < /dev/null; echo $?; uncompress -k h.Z; echo $?; uncompress nosuch.Z; echo $?; cp h.Z b; uncompress b; ` +
    `echo $?; echo junk | uncompress; echo $?; printf "\\037\\235" | uncompress; echo $?; ` +
    `printf "\\037\\235\\221" | uncompress; echo $?; printf "\\037\\235\\220\\377\\377\\377" | uncompress; echo $?; ` +
    `printf "\\037\\235\\220\\150\\377\\377\\377\\377\\377" | uncompress; echo $?; echo junk > j.Z; uncompress j.Z; ` +
    `echo $?; ls; uncompress -c h.Z nosuch h.Z; echo $?; uncompress /tmp; echo $?; cd /; rm -r /tmp/rt-lz`,
  `mkdir /tmp/rt-lz; cd /tmp/rt-lz; echo ${lzmaSmall} | base64 -d > h.lzma; echo ${lzmaFile} | base64 -d > s.lzma; ` +
    `lzcat h.lzma; lzma -dc s.lzma | md5sum; unlzma < s.lzma | tail -1; lzcat h.lzma s.lzma | wc -c; lzma h.lzma; echo $?; ` +
    `lzma -c h.lzma; echo $?; lzma -t s.lzma; echo $?; lzcat -h; echo $?; unlzma -x; echo $?; cp h.lzma a.lzma; ` +
    `unlzma -k a.lzma; echo $?; ls; unlzma a.lzma; echo $?; unlzma -f a.lzma; echo $?; ls; cat a; cp h.lzma b; unlzma b; ` +
    `echo $?; unlzma nosuch.lzma; echo $?; echo junk | unlzma; echo $?; echo junkjunkjunkjunk | unlzma; echo $?; ` +
    `head -c 13 s.lzma | unlzma; echo $?; head -c 100 s.lzma > c.lzma; unlzma c.lzma; echo $?; ls; wc -c < c; ` +
    `lzcat c.lzma h.lzma; echo $?; cp s.lzma d.lzma; ` +
    `printf XXXXXXXXXXXXXXXXXX | dd of=d.lzma bs=1 seek=50 conv=notrunc 2>/dev/null; unlzma -c d.lzma | wc -c; ` +
    `unlzma d.lzma; echo $?; ls; printf "\\377\\0\\0\\200\\0\\377\\377\\377\\377\\377\\377\\377\\377" | unlzma; echo $?; ` +
    `printf "\\135\\0\\0\\200\\0\\005\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0" | unlzma; echo $?; cp h.lzma v.lzma; ` +
    `lzma -dv v.lzma; echo $?; lzma -q -d -c h.lzma; unlzma /tmp; echo $?; cd /; rm -r /tmp/rt-lz`,
  `mkdir /tmp/rt-lz; cd /tmp/rt-lz; printf "hello lzop\\n" | lzop | od -An -t x1; ` +
    `printf "hello lzop\\n" | lzop -1 -C | od -An -t x1; printf "hello lzop\\n" | lzop -F | od -An -t x1; ` +
    `printf "" | lzop | od -An -t x1; seq 1 3000 | lzop | md5sum; seq 1 3000 | lzop -1 | md5sum; ` +
    `seq 1 3000 | lzop -C | md5sum; seq 1 3000 | lzop -F | md5sum; seq 1 60000 | lzop | md5sum; ` +
    `seq 1 60000 | lzop -1 | md5sum; seq 1 60000 | lzop -1 | lzop -d | md5sum; seq 1 60000 | md5sum; ` +
    `seq 1 3000 | lzop | lzop -dc | tail -1; printf "hello lzop\\n" | lzop -9; echo $?; lzop -h; echo $?; lzop -l x; ` +
    `echo $?; seq 1 2000 > a; lzop a; echo $?; ls; stat -c "%a %s" a.lzo; lzop a; echo $?; lzop -f -v a; echo $?; rm a; ` +
    `lzop -d a.lzo; echo $?; ls; lzop -dU a.lzo; echo $?; lzop -dUf a.lzo; echo $?; ls; seq 1 2000 > b; lzop -U b; ls; ` +
    `lzop -d -v b.lzo; echo $?; ls; rm a b; seq 5 > c; lzop -Uk c; ls; cp c.lzo c2; lzop -d c2; echo $?; ls; ` +
    `lzop -t c.lzo; echo $?; lzop -dc nosuch; echo $?; echo junk | lzop -d; echo $?; echo 0123456789abc | lzop -d; ` +
    `echo $?; echo junk > j.lzo; lzop -d j.lzo; echo $?; ls; wc -c < j; ` +
    `printf "hello lzop\\n" | lzop | head -c 50 | lzop -d; echo $?; seq 1 3000 | lzop > s.lzo; ` +
    `head -c 200 s.lzo | lzop -d | wc -c; cp s.lzo t.lzo; ` +
    `printf XXXXXXXX | dd of=t.lzo bs=1 seek=60 conv=notrunc 2>/dev/null; lzop -d < t.lzo | wc -c; ` +
    `lzop -dF < t.lzo | wc -c; printf X | dd of=s.lzo bs=1 seek=10 conv=notrunc 2>/dev/null; lzop -d < s.lzo; echo $?; ` +
    `seq 3 > e; lzop -9 e; echo $?; wc -c < e.lzo; lzop -dc c.lzo nosuch c.lzo; echo $?; cd /; rm -r /tmp/rt-lz`,
  // ed and mim: ed's addresses (numbers, . $ +/-, /string/, marks), p l = a i c d s (plain strings, g, p) k r w f q and the
  // byte counts, its stale current line after an insertion, every refusal, exit 0 but for usage; mim's targets, its
  // shell's options, a last line without its newline, no Mimfile, no target, usage.
  `mkdir -p /tmp/rt-ed; cd /tmp/rt-ed; printf 'one\\ntwo\\nthree\\nfour\\nfive\\n' > f; printf 'x\\001\\377\\n' > b; ` +
    `printf '%s\\n' ,p 2p '$=' '.-1,.+1p' = 1 /o/p //p 2ka 4kb "'a,'bp" ,s/o/0/ ',s/e/EE/gp' s/x/y/ 1,2l 'r b' ,l '2,3w part' w f q | ` +
    `ed f; echo $?; cat f part; printf '%s\\n' 3 2a new . ,p 1,2c C . ,p '$d' = i I . q y | ed f; ` +
    `printf '%s\\n' a text . 'w new' f w q | ed -p '\\u@\\h:\\W\\$ '; cat new; cd /; rm -r /tmp/rt-ed`,
  `cd /tmp; printf 'a\\nb\\n' > rt-ed-f; printf '%s\\n' 9p 0p 3,1p k "'Ap" "'zp" s s/a s/q/r/ s//x/ /nosuch/ x Q fx wq rx r 'r /nosuch' ` +
    `'r /tmp' 'w /nosuch/x' 9a z 1q u '1;2p' '?a?' | ed rt-ed-f; echo $?; ed /nosuch; echo $?; ed /tmp </dev/null; echo $?; echo p | ed; ` +
    `ed -s rt-ed-f; echo $?; ed -p; echo $?; ed --help; echo $?; ed --x; echo $?; rm rt-ed-f`,
  `mkdir -p /tmp/rt-mim; cd /tmp/rt-mim; mim; echo $?; mim --help; echo $?; ` +
    `printf 'build:\\n\\techo building "$@"\\n  echo second $0 $#\\n\\nclean:\\n\\techo cleaning\\n\\texit 3\\n' > Mimfile; mim; echo $?; ` +
    `mim clean; echo $?; mim build x y; echo $?; mim nosuch; echo $?; mim -e build; echo $?; mim -z build; echo $?; mim -o nosuch build; ` +
    `echo $?; mim -f; echo $?; printf 'a:\\n\\techo a\\nb:' > M2; mim -f M2; mim -f M2 b; echo $?; mim -f nosuch; echo $?; : > M3; mim -f M3; ` +
    `echo $?; cd /; rm -r /tmp/rt-mim`,
  // dpkg-deb, dpkg, rpm, rpm2cpio: a .deb's listing, control fields and files extracted; dpkg's status and info files
  // (none on the image), maintainer scripts, a changed conffile, dependencies, remove and purge, --configure's status
  // line; an rpm queried, its payload through cpio, installed with a config file kept; their usages and refusals.
  `mkdir /tmp/rt-pk; cd /tmp/rt-pk; echo ${helloDeb} | base64 -d > h.deb; echo ${helloXzDeb} | base64 -d > x.deb; ` +
    'dpkg-deb -c h.deb; dpkg-deb -c x.deb | wc -l; dpkg-deb -f h.deb; dpkg-deb -e h.deb; stat -c "%a %n" DEBIAN DEBIAN/*; ' +
    'dpkg-deb -e x.deb c; echo $?; dpkg-deb -e h.deb c; echo $?; dpkg-deb -x h.deb x; find x | sort; stat -c "%a %n" x/usr/bin/hello; ' +
    'dpkg-deb -X x.deb X; dpkg-deb -x h.deb x; echo $?; dpkg-deb; echo $?; dpkg-deb -z h.deb; echo $?; dpkg-deb --contents h.deb; ' +
    'echo $?; dpkg-deb -c h.deb d; echo $?; dpkg-deb -x h.deb; echo $?; dpkg-deb -cx h.deb d; echo $?; dpkg-deb -c nosuch; echo $?; ' +
    'dpkg-deb -c /etc/passwd; echo $?; dpkg-deb -x h.deb /no/dir; echo $?; cat h.deb | dpkg-deb -c - | wc -l; ' +
    'printf "!<arch>\\nfoo" > b.deb; dpkg-deb -c b.deb; echo $?; ar t b.deb; echo $?; cd /; rm -r /tmp/rt-pk',
  `mkdir /tmp/rt-pk; cd /tmp/rt-pk; echo ${helloDeb} | base64 -d > h.deb; echo ${needyDeb} | base64 -d > n.deb; ` +
    'dpkg -l; echo $?; dpkg -i h.deb; echo $?; dpkg; echo $?; dpkg -L hello; echo $?; mkdir -p /var/lib/dpkg; ' +
    'touch /var/lib/dpkg/status; dpkg -l; dpkg -i h.deb; echo $?; mkdir /var/lib/dpkg/info; dpkg -i h.deb; echo $?; ' +
    'ls /var/lib/dpkg/info; cat /var/lib/dpkg/status /var/lib/dpkg/info/hello.list; dpkg -l; dpkg -l "x*"; ' +
    'echo changed >> /etc/hello.conf; dpkg -i h.deb; ls /etc | grep hello; dpkg -i n.deb; echo $?; dpkg -i --force-depends n.deb; ' +
    'dpkg -l; dpkg -r hello; echo $?; dpkg -F depends -r hello; cat /var/lib/dpkg/status; ls /var/lib/dpkg/info; dpkg -l; ' +
    'dpkg -r hello; echo $?; dpkg -P hello; echo $?; dpkg --purge needy; ls /etc | grep hello; ls /var/lib/dpkg/info; ' +
    'cat /var/lib/dpkg/status; dpkg -P hello; echo $?; dpkg -r nosuch; echo $?; dpkg -i nosuch.deb; echo $?; dpkg --fo; echo $?; ' +
    'cd /; rm -r /tmp/rt-pk /var/lib; rm /etc/hello.conf.dpkg-new',
  `mkdir -p /tmp/rt-pk /var/lib/dpkg/info; cd /tmp/rt-pk; echo ${helloXzDeb} | base64 -d > x.deb; touch /var/lib/dpkg/status; ` +
    'dpkg --unpack x.deb; echo $?; dpkg -l; ls /etc | grep hello; dpkg --configure hello; echo $?; cat /var/lib/dpkg/status; ' +
    'dpkg -l; dpkg -P hello; echo $?; cd /; rm -r /tmp/rt-pk /var/lib /etc/hello.conf /usr/bin/hello /usr/share',
  `mkdir /tmp/rt-pk; cd /tmp/rt-pk; echo ${helloRpm} | base64 -d > h.rpm; rpm -qp h.rpm; rpm -qpl h.rpm; rpm -qpi h.rpm; ` +
    'rpm -qpd h.rpm; rpm -qpc h.rpm; rpm -qpdc h.rpm h.rpm; rpm -q h.rpm; echo $?; rpm -qa; echo $?; rpm -e hello; echo $?; ' +
    'rpm; echo $?; rpm -qp nosuch.rpm; echo $?; rpm -qp /etc/passwd; echo $?; rpm2cpio h.rpm | cpio -tv; rpm2cpio < h.rpm | wc -c; ' +
    'rpm2cpio nosuch; echo $?; mkdir x; cd x; rpm2cpio ../h.rpm | cpio -idm; find . | sort; cd ..; echo old > /etc/hello.conf; ' +
    'rpm -i h.rpm; echo $?; stat -c "%a %u %s %n" /etc/hello.conf* /usr/bin/hello /usr/share/doc/hello/README; ' +
    'cat /etc/hello.conf.rpmorig; cd /; rm -r /tmp/rt-pk /etc/hello.conf* /usr/bin/hello /usr/share',
  // An LZMA data member (dpkg-deb and dpkg take it) and an LZMA rpm payload (rpm2cpio reads it, rpm -i does not).
  `mkdir -p /tmp/rt-pk /var/lib/dpkg/info; cd /tmp/rt-pk; echo ${lzmaDeb} | base64 -d > l.deb; echo ${lzmaRpm} | base64 -d > l.rpm; ` +
    'dpkg-deb -c l.deb | wc -l; dpkg-deb -X l.deb x | wc -l; touch /var/lib/dpkg/status; dpkg -i l.deb; echo $?; dpkg -l; ' +
    'dpkg -P hello; rpm2cpio l.rpm | cpio -t; echo $?; rpm -qpl l.rpm; rpm -i l.rpm; echo $?; cd /; rm -r /tmp/rt-pk /var/lib',
  // Links: a symlink, a hard link (listed with its target, made last, from the current directory) and modes with setuid and sticky bits.
  `mkdir -p /tmp/rt-pk /var/lib/dpkg/info; cd /tmp/rt-pk; echo ${linksDeb} | base64 -d > k.deb; touch /var/lib/dpkg/status; ` +
    'dpkg-deb -c k.deb; dpkg-deb -X k.deb y; stat -c "%a %F %n" y/usr/bin/tool y/usr/lib y/usr/lib/*; readlink y/usr/bin/alias; ' +
    'dpkg -i k.deb; echo $?; dpkg -l; readlink /usr/bin/alias; ls /usr/bin/tool; cd /; dpkg -i /tmp/rt-pk/k.deb; echo $?; dpkg -l; ' +
    'cat /var/lib/dpkg/info/links.list; stat -c "%a %n" /usr/lib/hard /usr/bin/tool; dpkg -P links; ls /usr/lib; ls /usr/bin/tool; ' +
    'rm -r /tmp/rt-pk /var/lib; rmdir /usr/lib',
  // cal: months and years (-m, -j, -y), September 1752, the first and last years, its refusals; the current month by its line count.
  'cal 2 2024; cal 9 1752; cal -m 3 2025; cal -j 2 2024; cal 13 2024; echo $?; cal 2024; cal -m 1 1; cal 12 9999; cal -j 10 1752; cal 0; ' +
    'echo $?; cal | wc -l; cal x; echo $?; cal 3 2 1; echo $?; cal -y 2023 | head -3; cal -jy 2024 | head -12',
  // run-parts: the executable files of a directory in order (-a, --reverse, --test, --exit-on-error), a failing one named.
  `mkdir -p /tmp/rt-rp; cd /tmp/rt-rp; printf '#!/bin/sh\\necho one "$@"\\n' > 10-one; printf '#!/bin/sh\\necho two; exit 3\\n' > 20-two; ` +
    `printf '#!/bin/sh\\necho skip\\n' > 30.sh; printf 'echo noexec\\n' > 40-noexec; printf '#!/bin/sh\\necho four\\n' > 50-four; ` +
    `chmod +x 10-one 20-two 30.sh 50-four; mkdir 60-dir; run-parts /tmp/rt-rp; echo $?; run-parts --test /tmp/rt-rp; echo $?; ` +
    `run-parts -a x -a y --reverse /tmp/rt-rp; echo $?; run-parts --exit-on-error /tmp/rt-rp; echo $?; run-parts /nosuch; echo $?; ` +
    `run-parts --list /tmp/rt-rp; echo $?; cd /; rm -r /tmp/rt-rp`,
  // Issue #41, the shell's descriptors as busybox's (recorded on LXD 5.0.2): mv -v and ln -v lines, readlink's one operand,
  // command -v/-V and type of several names, pipes and $(…) after exec 1>&2 or 1>FILE, copies of fd 1 and fd 2 (3-9) past
  // pipes, substitutions, functions, eval, . and child shells, a closed stdout.
  'cd /tmp; rm -rf mv3; mkdir mv3; cd mv3; touch f g h; mv -v g f/x 2>&1; echo rc=$?; mkdir d; mv -v g nosuch h d 2>&1; echo rc=$?; touch d/f; mv -nv f d 2>&1; echo rc=$?; mv -v d/f f/x 2>&1; echo rc=$?; mkdir e; mv -v e d/g 2>&1; echo rc=$?; mv -v e/ e/x 2>&1; echo rc=$?; touch k; echo n | mv -iv k d/h 2>&1; echo; echo rc=$?; mkdir m; touch m2; mv -v d/h m2 k m 2>&1; echo rc=$?',
  'cd /tmp; rm -rf ln1; mkdir ln1; cd ln1; ln -sv t l; echo rc=$?; echo x > f; ln -v f h; ln -sfv f l; mkdir d; ln -sv f g d; ln -v f 2>&1; echo rc=$?; ln -sv f l 2>&1; echo rc=$?; ln -v nosuch h2 2>&1; echo rc=$?; ln -sv f nosuchdir/l 2>&1; echo rc=$?; ln -v d dl 2>&1; echo rc=$?',
  'cd /tmp; ln -sf /etc/passwd rl1; ln -sf rl1 rl2; readlink rl1 rl2; echo rc=$?; readlink -f rl1 rl2; echo rc=$?; readlink rl2; echo rc=$?; readlink; echo rc=$?; readlink -f /nosuch/x; echo rc=$?; readlink /etc/passwd; echo rc=$?',
  'cd /tmp; ln -sf nosuchtarget rl3; ln -sf rl4 rl4; readlink -v /etc/passwd; echo rc=$?; readlink -v /nosuch; echo rc=$?; readlink -fv /nosuch/x; echo rc=$?; readlink -f /tmp/nosuch; echo rc=$?; readlink -f rl3; echo rc=$?; readlink -n rl1; echo; readlink -vf rl4; echo rc=$?; readlink -v rl4; echo rc=$?; readlink -q -s rl1; echo rc=$?; readlink -f /tmp/../etc//passwd/; echo rc=$?; readlink -f ""; echo rc=$?; readlink -f /etc/passwd/x; echo rc=$?; readlink -v /etc/passwd/x; echo rc=$?; readlink -f /tmp/rl3/; echo rc=$?',
  'command -v ls nosuch cat; echo rc=$?; command -v nosuch ls; echo rc=$?; command -v ls cat; echo rc=$?',
  'command -V ls nosuch cat; echo rc=$?; command -V echo cd; echo rc=$?',
  'f() { echo hi; }; type f if echo cd export : ls /bin/ls /tmp nosuch; echo rc=$?; command -V f; command -V export; command -V /tmp; command -v /tmp; command -v export',
  'exec 1>&2; x=$(echo sub); echo "x=$x"; echo y > /tmp/f; cat /tmp/f; echo z | wc -l; { echo g; echo h; } > /tmp/g; cat /tmp/g; ls /nosuch 2>&1 | wc -l; f() { echo fn; }; y=$(f); echo "y=$y"; z=`echo bq`; echo "z=$z"',
  { user: 1000, script: 'cd /tmp; exec 1>/tmp/ou; x=$(echo sub); echo "x=$x"; echo z | wc -l; exec 1>&2; echo b; cat /tmp/ou' },
  '{ exec 1>/tmp/o; echo a; exec 1>&2; echo b; ls /nosuch; echo c; } | cat; cat /tmp/o; x=$(exec 1>&2); echo after',
  'exec 3>&1; echo x >&3 | wc -l; exec 4>&1; echo x >&4 | wc -l; exec 9>&1; { echo y >&9; echo z; } | wc -l',
  'exec 3>&1; x=$(echo in >&3; echo sub); echo "x=$x"; { echo g >&3; echo h; } > /tmp/g; echo ==; cat /tmp/g; exec 1>&2; y=$(echo sub2 >&3); echo "y=$y"',
  'exec 5>&1; for i in 1 2; do echo $i >&5 | cat; echo y; done; echo z >&5 | wc -c; exec 3>&1; f() { echo f >&3; echo g; }; f | wc -l; { echo x >&3; ls /nosuch; } 2>&1 | wc -l; { echo x2 >&3; ls /nosuch; } 2>/dev/null | wc -l; exec 1>/tmp/o; echo a | cat; echo b >&3 | cat; exec 1>&3; echo c; cat /tmp/o',
  {
    user: 1000,
    script:
      'cd /tmp; exec 3>&1; echo x >&3 | wc -l; exec 7>&1; y=$(echo q >&7); echo "y=$y"; (exec 4>&1; echo i >&4) | wc -l; (exec 2>&1; ls /nosuch) | wc -l',
  },
  'echo a >&-; echo rc=$?; echo b 1>&-; echo rc=$?; { echo c; } >&-; echo rc=$?; exec >&-; printf x; echo rc=$? >&2; pwd; echo rc=$? >&2; echo e; echo rc=$? >&2',
  "exec 3>/tmp/log; sh -c 'echo one >&3; echo out'; echo two >&3; sh -c 'echo three >&3' | cat; cat /tmp/log; exec 6>&1; sh -c 'echo child >&6' | wc -l; exec 4>&1; x=$(sh -c 'echo in >&4; echo sub'); echo \"x=$x\"; printf 'echo s1 >&4\\necho s2\\n' > /tmp/s.sh; sh /tmp/s.sh | wc -l; exec 4>&-; sh -c 'echo z >&4'; echo rc=$?",
  "exec 3>&1; x=$(sh -c 'echo in >&3; echo sub'); echo \"x=$x\"; sh -c 'echo a >&3; ls /nosuch' 2>&1 | wc -l",
  "exec 3>&1; f() { echo x >&3; echo y; }; f > /tmp/f; echo ==; cat /tmp/f; eval 'echo e >&3; echo e2' > /tmp/e; echo ==; cat /tmp/e; printf 'echo s >&3\\necho t\\n' > /tmp/src.sh; . /tmp/src.sh > /tmp/so; echo ==; cat /tmp/so; sh -c 'echo c >&3; echo d' > /tmp/c; echo ==; cat /tmp/c; g() { echo in >&3; } > /tmp/g; g; echo ==; cat /tmp/g",
  'exec 3>&1; exec 1>&3; { echo x; } > /tmp/g; echo ==; cat /tmp/g; exec 2>&1; exec 1>&2; { echo c; ls /nosuch; } > /tmp/c; echo ==; cat /tmp/c',
  "exec 4>&2; { echo a; echo b >&4; } 2>/dev/null | cat; echo c; f() { echo e1 >&4; ls /nosuch; }; f 2>/dev/null; f 2>&1 | wc -l; eval 'echo e2 >&4' 2>/tmp/e2; cat /tmp/e2; sh -c 'echo e3 >&4' 2>/dev/null; x=$(echo s >&4 2>/dev/null); { x=$(echo t >&4); } 2>/dev/null; echo \"x=$x\"",
  'exec 4>&2; exec 2>&1; { echo x >&4; ls /nosuch; } | wc -l; echo y >&4; exec 2>&4; exec 2>/tmp/e; { echo x2 >&4; ls /nosuch; }; echo y2 >&4; exec 2>&4; cat /tmp/e; exec 2>&1; exec 5>&2; { echo z >&5; } 2>/dev/null; { ls /nosuch; } 2>/dev/null; { ls /nosuch3; } > /tmp/n3; echo ==; cat /tmp/n3',
  // Aliases are no variables; a signal's trap runs right after the command it came during, however that was invoked
  // (eval, command, a variable, a function), or after the command holding the subshell that sent it (issue #41).
  'alias x=ls\necho "[${BASH_ALIAS_x}]"; BASH_ALIAS_y=echo; y hi; echo $?; set | grep -c BASH_ALIAS; export BASH_ALIAS_z=1; env | grep BASH_ALIAS; alias; type x; command -v x',
  'cat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; eval "kill -USR1 \\$\\$"; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; eval "kill -USR1 \\$\\$; echo in"; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; command kill -USR1 $$; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; k=kill; $k -USR1 $$; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; f() { kill -USR1 $$; echo inf; }; f; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; (kill -USR1 $$; echo sub); echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T; exit 3" USR1; (kill -USR1 $$; echo sub); echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; kill -USR1 $$ | cat; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; echo x | kill -USR1 $$; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; x=$(kill -USR1 $$; echo sub); echo "x=$x"; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap "echo T" USR1; echo "x=$(kill -USR1 $$)"; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T$?\' USR1; (kill -USR1 $$; exit 4); echo "rc=$?"\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\nset -e; trap \'echo T\' USR1; (kill -USR1 $$; exit 4) || echo caught; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; while kill -USR1 $$; do echo loop; break; done; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; for i in 1 2; do kill -USR1 $$; done; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; if kill -USR1 $$; then echo yes; fi\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; kill -USR1 $$ && echo and\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; { kill -USR1 $$; echo g; } | cat; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; f(){ kill -USR1 $$; return 3; }; f; echo "rc=$?"\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T\' USR1; { kill -USR1 $$; echo g; }; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'echo T; false\' USR1; set -e; kill -USR1 $$; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\ncat > /tmp/rt-trap <<\'EOF\'\ntrap \'false || echo T\' USR1; set -e; kill -USR1 $$; echo after\nEOF\nsh /tmp/rt-trap; echo "rc=$?"\nrm /tmp/rt-trap',
  // A shell killed by its own kill from a subshell, a pipeline's command or $(…), each run as the exec's shell.
  '(kill $$); echo after',
  'x=$(kill $$); echo after',
  'kill $$ | cat; echo after',
  // tar's compressors (-j -J -Z --lzma -a) and --to-command as busybox's: archives made on the host with GNU tar and xz,
  // bzip2, ncompress and lzma (issue #41). Not `tar cJf`: whether the bed's tar also says `write error: Broken pipe` (xz,
  // refusing -z, has left the pipe) is a race; test/simulator/guest-tar-compressors.test.ts holds its usage.
  'rm -rf /tmp/h; mkdir -p /tmp/h && cd /tmp/h && echo /Td6WFoAAATm1rRGAgAhARYAAAB0L+Wj4Cf/AG9dADCLiofEDvKXpPh1PcWp7dmabcoh9LNYZ2g9G16cS85sTBCl/7iTw6c2Kh0xAaWLNAczPIBjuZOdLuHM/iO8QezSdutcWc/dvgZlxWSl5GGy9V2Qot7Xp5nTd+yhDQ0i1K9ROQM7Ttx1zUSGupRoAAAAB6iF2cMaFjMAAYsBgFAAAP2BpwuxxGf7AgAAAAAEWVo= | base64 -d > a.txz; echo QlpoOTFBWSZTWcYT2SwAAHN7hMkQAERAAX8AAAhiRJ5AAACACCAAdQ0KeoZNNBtRkNqCSJGgNABoaTo17OhBGoBIxysJaXRJMkgdduQm/MKwXCgSbRMVQJ1MzGuAy5zJqWfz0UDBo2urm932gREH4u5IpwoSGMJ7JYA= | base64 -d > a.tbz; echo H52QYVzQwUMHgMGDCBMqXMiwocOHECMihEERhg0aNABU3KhxI8WOHivaABCjxgwYGGXIgCEjhsYYMGqoBAAChsSbOHPq3Amgzhw6YeSAAAFAzps3BXkuNIpUqdOnUKNKnUr1JpoybNi8UVC1q9evYMOKHUu2rNmzaNOqXcu2rdu3cOPKnUu3rt27ePPq3cu3r9+/gAMLHky4sOHDiBMrXsy4sePHkCNLnky5suXLmDNr3sy5s+fPoEOLHk26tOnTqFOrXs26tevXsGPLnk27tu3buHPr3s27t+/fwIMLH068uPHjyJMrX86cNg== | base64 -d > a.tZ; echo XQAAgAD//////////wAwi4qHxA7yl6T4dT3Fqe3Zmm3KIfSzWGdoPRtenEvObEwQpf+4k8OnNiodMQGlizQHMzyAY7mTnS7hzP4jvEHs0nbrXFnP3b4GZcVkpeRhsvVdkKLe16eZ03fsoQ0NItSvUTkDO07cdc1EhrtNMoKb/8Ktciw= | base64 -d > a.tlz; echo hi > b && tar cf x.tar b && mkdir q && echo 1 > q/f && tar cf q.tar q',
  'cd /tmp/h\n(tar tJf a.txz && tar tjf a.tbz && tar tZf a.tZ && tar --lzma -tf a.tlz); echo "rc=$?"\n(tar xOJf a.txz; tar xOjf a.tbz; tar xOZf a.tZ; cat a.tlz | tar --lzma -xO); echo "rc=$?"\n(tar tf a.tbz); echo "rc=$?"\n(tar taf a.txz); echo "rc=$?"\n(tar tjf a.txz); echo "rc=$?"\n(tar tZf x.tar); echo "rc=$?"\n(tar tzf a.tbz); echo "rc=$?"\n(tar tJf a.tbz); echo "rc=$?"\n(tar --lzma -tf a.tbz); echo "rc=$?"\n(tar --lzma -tf a.txz); echo "rc=$?"\n(head -c 100 a.tbz > t.tbz; tar tjf t.tbz); echo "rc=$?"\n(head -c 100 a.txz > t.txz; tar tJf t.txz); echo "rc=$?"\n(tar cjf - b | tar tjf - && tar cjf b.tbz b && bunzip2 < b.tbz | tar tf -); echo "rc=$?"\n(tar cZf b.tZ b; echo $?; wc -c < b.tZ); echo "rc=$?"\n(for e in tgz tar.gz tbz2 tbz tar.bz2 tlz tar.Z; do tar caf o.$e b; echo "$e $(head -c 3 o.$e | od -An -tx1)"; done); echo "rc=$?"\n(tar xf x.tar --to-command=\'env | grep ^TAR_ | sort; exit 3\'; echo $?); echo "rc=$?"\n(tar xvf q.tar --to-command=\'cat; exit 2\'; echo $?); echo "rc=$?"\n(tar xvf q.tar --to-command=\'echo $TAR_FILENAME $TAR_SIZE; cat\'); echo "rc=$?"\n(tar xOf x.tar --to-command=cat; echo $?; tar tf x.tar --to-command=cat); echo "rc=$?"\n(tar xf q.tar --to-command=\'cat >&2; echo out\'); echo "rc=$?"',
  // gzip writes busybox 1.35's own deflate bytes at every level (Debian's busybox has no levels), from a pipe and FILE to FILE.gz.
  'for l in "" -1 -6 -9; do seq 1 30000 | gzip $l -c | md5sum; done',
  'cd /tmp && rm -f gzb gzb.gz && seq 1 30000 > gzb && gzip -1 gzb && md5sum gzb.gz && rm -f gzb.gz',
  'yes "hello, busybox" | head -c 100000 | gzip | md5sum; seq 1 30000 | gzip | gunzip | md5sum',
  'seq 1 20000 | gzip -9 -c | wc -c; seq 1 30000 | gzip -c | tail -c 8 | od -An -tx1',
  { user: 1000, script: 'cd /tmp && rm -f gzb gzb.gz && seq 1 30000 > gzb && gzip -1 gzb && md5sum gzb.gz && rm -f gzb.gz' },
  // Issue #41: busybox's cut, od, sed, sort, grep -r and cat with options (ported or wrapped): operands they cannot open reported
  // in place and the rest read, busybox's messages and statuses, their order under 2>&1 (recorded on LXD 5.0.2, in this order).
  "rm -rf /tmp/ia; mkdir /tmp/ia; cd /tmp/ia; printf 'b\\na\\nc\\n' > f1; printf 'z\\ny\\n' > f2; printf 'x y' > nonl; : > empty; mkdir d1; printf 'secret\\n' > ro; chmod 000 ro; mkdir w; chmod 777 w; printf '1:2:3\\n4:5:6\\n' > t; printf 'hello\\n' > h",
  'cd /tmp/ia; cut -d: -f2 t /nosuch t 2>&1; echo rc=$?; cut -c1 d1 f1; echo rc=$?',
  { user: 1000, script: 'cd /tmp/ia; cut -c1 ro f1 2>&1; echo rc=$?' },
  'cd /tmp/ia; cut -c 3-1 f1; cut -c 1-0 t; cut -c 2,1 -D t; printf "a b  c\\n" | cut -F 2,3',
  'cd /tmp/ia; printf abcdefghijklmnopqrst > w/20; od -c w/20 /nosuch f2 2>&1; echo rc=$?; od -c /nosuch /nosuch2 2>&1; echo rc=$?; od -c f1 d1 2>&1; echo rc=$?; rm w/20',
  { user: 1000, script: 'cd /tmp/ia; od -c ro f1 2>&1; echo rc=$?' },
  'cd /tmp/ia; sed -n p f1 /nosuch f2 2>&1; echo rc=$?; sed = /nosuch f1 /n2 f2 /n3 2>&1; echo rc=$?',
  'cd /tmp/ia; sed q f1 /nosuch 2>&1; echo rc=$?; sed p d1 f1 2>&1; echo rc=$?; echo in | sed p - /nosuch f2 2>&1; echo rc=$?',
  { user: 1000, script: 'cd /tmp/ia; sed p ro f1 2>&1; echo rc=$?; sed -f /nosuch f1 2>&1; echo rc=$?' },
  'cd /tmp/ia; cp f2 f3; sed -i s/y/Y/ /nosuch f3 2>&1; echo rc=$?; cat f3',
  'cd /tmp/ia; grep -r l /tmp/ia/h /nosuch 2>&1; echo rc=$?; grep -rl l /nosuch /tmp/ia/h 2>&1; echo rc=$?; grep -rq l /nosuch /tmp/ia/h 2>&1; echo rc=$?; grep -rs l /nosuch h; echo rc=$?; grep -r l /nosuch 2>&1; echo rc=$?',
  { user: 1000, script: 'cd /tmp/ia; grep -rl l . ; echo rc=$?; grep l d1 h; echo rc=$?; grep -H l h; grep -rc l w; echo rc=$?' },
  'cd /tmp/ia; sort f1 /nosuch f2 2>&1; echo rc=$?; sort f1 d1; echo rc=$?; sort -o w/out f1 /nosuch 2>&1; echo rc=$?; ls w',
  'cd /tmp/ia; sort -k 0 f1; sort -k 2,1x f1; sort -t ab f1; sort -o d1 f1; sort -o /nosuchdir/x f1; sort -c f1; echo rc=$?; sort -x f1 2>&1 | head -1; sort -S 10 -T /tmp -r f1',
  { user: 1000, script: 'cd /tmp/ia; sort ro; echo rc=$?; sort -o ro f1; echo rc=$?' },
  "cd /tmp/ia; printf 'x:3:a\\ny:1:b\\nz:2:a\\n' > w/t; sort -t: -k3,3 -k1r w/t; printf '10\\n9\\n-1\\n1e2\\nabc\\n 5\\n' | sort -g; printf 'Feb\\njan\\nDEC\\nfoo\\n' | sort -M; rm w/t",
  'cd /tmp/ia; cat -n f1 /nosuch f2 2>&1; echo rc=$?; cat -n nonl d1 f1; printf "a\\n\\nb" | cat -b',
  "cd /tmp/ia; cat -A f1 /nosuch f2 2>&1; echo rc=$?; printf '\\200\\377\\033x\\177\\t\\n' | cat -t; cat -vn f1 d1; echo rc=$?",
  'cd /tmp/ia; cat -s f1; echo rc=$?; cat d1 f1 2>&1; echo rc=$?',
  "cd /tmp/ia; printf 'a\\n' | cut -f1 -d' ' - -; printf 'a\\n' | od -c - -; printf 'b\\na\\n' | sort - -; printf 'a\\n' | cat -n - f1 -",
  "cd /tmp/ia; sed -n p f1 nonl; sed -n '$=' nonl; sed -n 's/x/X/p' nonl; echo; sed p nonl",
  "cd /tmp/ia; sed 'b nosuch' f1; sed k f1; sed '3,' f1; echo rc=$?",
  // sed as busybox's editors/sed.c (ported): its script errors, y with a shorter replacement, `{` without `}`, q before a `-`
  // operand, regcomp's refusals in glibc's words, leftmost-longest matches, -i over a symlink, with a backup and a w file, and
  // a temporary file the user may not make.
  "cd /tmp/ia; sed 's/a/b' f1; sed -r 's/(a/x/' f1; sed 's/a/b/z' f1; sed 'y/ab/c/' f1; sed -n '{p' f1; printf '1\\n2\\n3\\n' | sed q - f2; echo rc=$?",
  "cd /tmp/ia; sed 's/[[:foo:]]/x/' f1; sed 's/a\\{2,1\\}/x/' f1; sed 's/\\1/x/' f1; sed -r 's/a|*b/x/' f1; echo abcd | sed -r 's/a|ab/X/'; echo xxy | sed -r 's/x*(xy)?/<&>/'",
  "cd /tmp/ia; printf 'a\\nb\\nc\\n' | sed -n '$!N;P;D'; sed '1~2p' f1; sed -n '0,/a/p' f1; sed -n '2,+1p;$=' f1 f2; sed '$!d' nonl | od -c",
  "cd /tmp/ia; ln -s ../f2 w/lk; sed -i s/z/Z/ w/lk; ls -l w/lk | cut -c1; cat f2 w/lk; cp f1 w/g; sed -i.bak -e '1w w/one' -e 1d w/g; cat w/g w/g.bak w/one; rm -f w/lk w/g w/g.bak w/one",
  {
    user: 1000,
    script:
      "cd /tmp/ia; printf 'x\\n' > w/u; sed -i 's/x/y/' w/u; cat w/u; sed -i p f1 2>&1 | sed 's/f1....../f1XXXXXX/'; echo a | sed 'w /etc/x'; echo rc=$?; rm w/u",
  },
  'rm -rf /tmp/ia',
  // A shell started inside the exec's is a process of its own (issue #41): `sh -c`, `sh FILE`, `sh` on a pipe and a script
  // run by its path get their own $$ and $PPID, the exported variables only, their own traps, EXIT trap and umask; a
  // signal to their $$ ends them alone, the parent saying how they died (nested-shell.ts).
  'x=1; f() { echo f; }; printf \'#!/bin/sh\\necho "x=$x"; f\\n\' > /tmp/p; chmod +x /tmp/p; /tmp/p; echo rc=$?',
  "sh -c 'echo $$' > /tmp/a; echo $$ > /tmp/b; cmp -s /tmp/a /tmp/b && echo same || echo differ",
  'sh -c \'kill $$; echo in\'; echo "after $?"',
  "sh -c 'umask 077'; umask",
  'sh -c \'trap "echo X" EXIT; echo body\'; echo after',
  "trap 'echo T' TERM; sh -c 'kill $$'; echo after $?",
  'sh -c \'trap "echo N" TERM; kill $$; echo in\'; echo after $?',
  "printf 'echo $$\\nkill $$\\necho in\\n' > /tmp/k; sh /tmp/k > /tmp/o; echo after $?; cat /tmp/o | wc -l",
  "printf '#!/bin/sh\\nkill $$\\necho in\\n' > /tmp/k2; chmod +x /tmp/k2; /tmp/k2; echo after $?",
  'sh -c \'echo $PPID\' > /tmp/pp; [ "$(cat /tmp/pp)" = "$$" ] && echo ppid-ok',
  'umask 077; sh -c umask',
  "trap '' INT; sh -c 'trap'",
  "sh -c 'kill -9 $$'; echo after $?",
  'printf \'#!/bin/sh\\ntrap "echo X" EXIT\\necho in\\n\' > /tmp/e; chmod +x /tmp/e; /tmp/e; echo after',
  "printf '#!/bin/sh\\necho $$\\n' > /tmp/d; chmod +x /tmp/d; /tmp/d > /tmp/a; echo $$ > /tmp/b; cmp -s /tmp/a /tmp/b && echo same || echo differ",
  'sh -c \'kill -USR1 $$; echo in\'; echo "after $?"',
  'echo \'kill $$; echo in\' | sh; echo "after $?"',
  'sh -c \'sh -c "kill \\$PPID"; echo in\'; echo "after $?"',
  'rm -f /tmp/p /tmp/a /tmp/b /tmp/k /tmp/o /tmp/k2 /tmp/pp /tmp/e /tmp/d',
  // An exec without a terminal: /dev/tty opens for no one (ENXIO), and the shell's redirections say so.
  'echo hi > /dev/tty; echo rc=$?; echo hi >> /dev/tty; echo rc=$?; read x < /dev/tty; echo rc=$?; (exec 1>/dev/tty; echo hi); echo rc=$?; (exec 3<>/dev/tty); echo rc=$?',
  'cat /dev/tty; echo rc=$?',
  'for p in head wc od sort cut nl rev fold uniq md5sum xxd hexdump tac; do $p /dev/tty; echo "$p rc=$?"; done 2>&1; echo x | tee /dev/tty; cmp /dev/tty /dev/null; echo rc=$?; test -e /dev/tty && test -w /dev/tty && echo there',
  // Syntax errors in ash's words: a token out of place, a construct left open, an unterminated quote or backquote.
  "sh -c 'fi'; sh -c 'echo a; }'; sh -c 'if true; then echo'; sh -c 'if true; then'; sh -c 'while true'; sh -c 'while true; do echo'; sh -c '{ echo'; echo rc=$?",
  "sh -c 'echo \"abc'; sh -c \"echo 'abc\"; sh -c 'echo `echo'; sh -c '(echo a'; sh -c 'echo $(echo'; sh -c 'case x in a) echo;;'; sh -c 'f() { echo;'; sh -c 'echo a; then'; echo rc=$?",
  // A script with a syntax error runs the commands before the error's line (its EXIT trap too), whether given by -c, in a file or on a pipe.
  "sh -c \"$(printf 'trap \"echo bye\" EXIT\\necho a\\nfi\\necho b')\"; echo rc=$?; printf 'echo a\\n\\nfi\\n' > /tmp/rt-s; sh /tmp/rt-s; echo rc=$?; printf 'x=1\\nif true; then echo $x; fi\\ndone\\n' | sh; echo rc=$?; rm /tmp/rt-s",
  // sh's options: -s (its script on stdin, the operands its arguments), -c with settings before it, combined letters, -o, +, --, and its refusals.
  "echo 'echo hi $1 $#' | sh -s; echo 'echo hi $1 $#' | sh -s -- a b; echo 'echo hi $1' | sh -s x; echo 'echo $1' | sh -s -- -x; echo 'echo hi' | sh -l; sh -ec 'false; echo no'; echo rc=$?; sh -x -c 'echo a'; sh -o pipefail -c 'false | true; echo $?'; sh +e -c 'echo ok'; sh -c; echo rc=$?; sh -q </dev/null; echo rc=$?",
  // sleep's and usleep's numbers, refused at once.
  "usleep -; echo rc=$?; usleep 1x; usleep +5; usleep ' 5'; usleep 4294967296; echo rc=$?; usleep 1 2; usleep 0004; echo rc=$?; usleep; echo rc=$?; sleep; echo rc=$?; sleep x; echo rc=$?",
  // A program env, setsid and xargs cannot run, in busybox's words.
  'echo hi > /tmp/f; for p in env setsid xargs; do $p /tmp/f </dev/null; echo rc=$?; $p /nosuch </dev/null; echo rc=$?; done 2>&1; env -i A=1 nosuch; echo rc=$?; echo a | xargs nosuch; echo rc=$?',
  // time is busybox's applet (its figures left out: the wall clock differs by nature).
  'TIME="%x %C" time sh -c "exit 2" a b 2>&1; echo rc=$?; time -f "a\\tb%%%q" true 2>&1; time /nosuch 2>&1 | head -2; time -f %x /tmp 2>&1; time -o; echo rc=$?; type time',
  'time -o /tmp/to -f %x false; echo rc=$?; time -a -o /tmp/to -f "%C" echo hi; cat /tmp/to; x=$(time -f %x echo hi 2>&1); echo "[$x]"',
  // chdir, cd by its other name.
  'chdir /nosuch; echo rc=$?; chdir; pwd; type chdir; chdir -P /tmp; pwd',
  // ash's keywords, and [[ as a word after a command's name.
  'type [[; type ]]; type function select time !; echo rc=$?; command -V [[; command -v [[; echo [[ ]]',
  // just-bash's programs over a file that does not open, in busybox's words, the file as typed.
  'cd /tmp; for p in nl rev fold uniq md5sum sha256sum xxd hexdump tac strings paste base64; do $p nosuch; echo "$p rc=$?"; done 2>&1',
  "export X=1; ash -c 'echo $X $0; nosuch'; echo rc=$?; ash -c 'echo $1' n a",
  "echo 'echo piped $0' | ash; printf 'echo f $0\\nnosuch\\n' > /tmp/s; ash /tmp/s; rm /tmp/s",
  'export X=1; Y=2; Z=3 sh -c \'echo "$X.$Y.$Z"\'',
  "set -e; sh -c 'false; echo in'; echo out",
  "cd /tmp; sh -c 'pwd; cd /; pwd'; pwd",
  "sh -c 'echo $0 $1 $# \"$@\"' a b c; sh -c 'exit 5'; echo $?",
  "alias ll='ls -ld'; sh -c 'type ll'; echo rc=$?",
  'readonly R=1; sh -c \'R=2; echo "R=$R"\'',
  'echo "$SHLVL"; sh -c \'echo $SHLVL; sh -c "echo \\$SHLVL"\'',
  'printf \'#!/bin/sh\\nread x; echo "got $x $# $1"\\n\' > /tmp/s; chmod +x /tmp/s; echo hi | /tmp/s one; rm /tmp/s',
  'printf \'f() { echo "f $1"; exit 4; }\\nf x\\necho no\\n\' > /tmp/s; sh /tmp/s; echo rc=$?; rm /tmp/s',
  'printf \'#!/bin/sh\\necho "$0"\\n\' > /tmp/s; chmod +x /tmp/s; cd /tmp; ./s; /tmp/s; PATH=/tmp:$PATH s; rm /tmp/s',
  "trap 'echo parent-exit' EXIT; sh -c 'trap \"echo child-exit\" EXIT; exit 2'; echo rc=$?",
  'sh -c \'trap "echo child-exit" EXIT; kill $$\'; echo rc=$?',
  'printf \'#!/bin/sh\\necho "pp=$PPID"\\n\' > /tmp/s; chmod +x /tmp/s; x=$(/tmp/s); [ "$x" = "pp=$$" ] && echo same || echo "differ $x"; rm /tmp/s',
  "sh -c 'kill -TERM $PPID; echo child'; echo after",
  "umask 027; printf '#!/bin/sh\\numask; umask 077\\n' > /tmp/s; chmod +x /tmp/s; /tmp/s; umask; rm /tmp/s",
  "sh -c 'kill -0 $$ && echo alive'; kill -0 99999; echo rc=$?",
  "sh -c 'kill -CHLD $$; echo in'; echo rc=$?",
  'sh -c \'trap "" TERM; kill $$; echo in\'; echo rc=$?',
  "sh -c '(kill $$; echo sub); echo in'; echo rc=$?",
  "sh -c 'f() { kill $$; echo inf; }; f; echo in'; echo rc=$?",
  "sh -c 'kill $$ && echo and'; echo rc=$?",
  'sh -c \'echo x; kill $$\' | cat; echo "rc=$?"',
  'echo "$(sh -c \'echo x; kill $$; echo y\')"; echo rc=$?',
];

/**
 * `query` without `--wait` prints an operation (a background refusal comes later) or the synchronous
 * error: what is compared is which one, the operation's class and description (its status is a race).
 */
const operationOrError = (text: string): string => {
  try {
    const op = JSON.parse(text) as { class?: string; description?: string };
    if (op.class) return `operation: ${op.class}, ${op.description}\n`;
  } catch {
    // Not JSON: an error text (on stderr) or nothing.
  }
  return text;
};

export const scenario: ScenarioStep[] = [
  { args: ['init', 'R:reflex-busybox', 'R:{n}', ...init] },
  { args: ['list', 'R:{n}'] },
  { args: ['info', 'R:{n}', '--show-log'], transform: withoutLogLines },
  { args: ['list', 'R:{n}', '--format', 'csv'] },
  { args: ['config', 'get', 'R:{n}', 'raw.lxc'] },
  { args: ['config', 'set', 'R:{n}', 'user.purpose', 'differential'] },
  { args: ['config', 'get', 'R:{n}', 'user.purpose'] },
  { args: ['config', 'unset', 'R:{n}', 'user.purpose'] },
  { args: ['config', 'get', 'R:{n}', 'user.purpose'] },
  { args: ['config', 'set', 'R:{n}', 'bogus.key', '1'] },
  { args: ['config', 'set', 'R:{n}', 'limits.memory', 'notanumber'] },
  { args: ['config', 'set', 'R:{n}', 'limits.memory', '64MiB'] },
  { args: ['config', 'set', 'R:{n}', 'security.privileged', 'maybe'] },
  { args: ['config', 'set', 'R:{n}', 'boot.autostart', 'false'] },
  { args: ['config', 'set', 'R:{n}', 'volatile.uuid', 'x'] },
  { args: ['config', 'device', 'add', 'R:{n}', 'd1', 'bogustype'] },
  { args: ['config', 'unset', 'R:{n}', 'limits.memory'] },
  { args: ['config', 'unset', 'R:{n}', 'boot.autostart'] },
  { args: ['config', 'show', 'R:{n}'] },
  { args: ['exec', 'R:{n}', '--', 'true'] },
  { args: ['start', 'R:{n}'] },
  { args: ['start', 'R:{n}'] },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'nstS'] },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'echo hi; exit 3'] },
  { args: ['exec', 'R:{n}', '--', 'echo', 'hello', 'world'] },
  // Issue #41 item 5: printf writes the byte an escape names (one byte 0xff, read here as U+FFFD on both sides).
  { args: ['exec', 'R:{n}', '--', 'printf', '\\xff\\n'] },
  // Issue #41 item 5, the rest of busybox: what a container without a network shows and answers
  // (the test beds' instances have no NIC; the simulator's default profile loses its own above).
  // A step with a user runs as that user and group, in /tmp.
  ...busyboxSteps.map((s): ScenarioStep => {
    const as = typeof s === 'string' ? [] : ['--user', `${s.user}`, '--group', `${s.user}`, '--cwd', '/tmp'];
    return { args: ['exec', 'R:{n}', ...as, '--', 'sh', '-c', typeof s === 'string' ? s : s.script], only: 'lxc' };
  }),
  { args: ['exec', 'R:{n}', '--', 'false'] },
  // The exec's own sh -c CMD NAME ARGS: $0 is NAME, its messages say so (issue #41).
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'echo "$0 $1 $#"; nosuch', 'NAME', 'A'], only: 'lxc' },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'nosuchcmd'], transform: withoutShellNotFound },
  { args: ['exec', 'R:{n}', '--', 'nosuchcmd'] },
  // The beds' busybox image has no bash: the exec is "Command not found", and so is bash in a script.
  { args: ['exec', 'R:{n}', '--', 'bash', '-c', 'echo hi'] },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'bash -c "echo hi"; echo "rc=$?"; command -v bash; echo "rc=$?"'] },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'echo out; echo err >&2; exit 0'] },
  // Issue #28 finding 1: exec runs a real shell (variables, pipes, redirection, loops, tests, cwd, stdin).
  ...shellCases.map((sh): ScenarioStep => ({ args: ['exec', 'R:{n}', ...sh], only: 'incus' })),
  ...fileSteps,
  // Finding 2: a file pushed, read back by exec and pulled, deleted. Through `query` on the files API:
  // `incus file push/pull/delete` go over SFTP (GET /1.0/instances/NAME/sftp, an upgraded connection)
  // that the simulator does not serve (it answers 404, the client says "Error: not found").
  { args: ['query', '-X', 'POST', 'R:/1.0/instances/{n}/files?path=/tmp/in.txt', '--data', 'pushed bytes'], only: 'incus' },
  { args: ['exec', 'R:{n}', '--', 'cat', '/tmp/in.txt'], only: 'incus' },
  { args: ['query', '--raw', 'R:/1.0/instances/{n}/files?path=/tmp/in.txt'], only: 'incus' },
  { args: ['query', '-X', 'DELETE', 'R:/1.0/instances/{n}/files?path=/tmp/in.txt'], only: 'incus' },
  { args: ['exec', 'R:{n}', '--', 'cat', '/tmp/in.txt'], only: 'incus' },
  { args: ['query', '--raw', 'R:/1.0/instances/{n}/files?path=/tmp/in.txt'], only: 'incus' },
  // Finding 4: a running instance cannot be renamed.
  { args: ['rename', 'R:{n}', 'R:{n}-renamed'], only: 'incus' },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'ns'], only: 'incus' },
  // Finding 7: `info` of a running instance shows `Started:` (from /state's started_at).
  { args: ['info', 'R:{n}'] },
  { args: ['query', 'R:/1.0/instances/{n}/state'] },
  { args: ['snapshot', 'R:{n}', 's1'], incus: ['snapshot', 'create', 'R:{n}', 's1'] },
  { args: ['snapshot', 'R:{n}', 's1'], incus: ['snapshot', 'create', 'R:{n}', 's1'] },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'nsS'] },
  { args: ['restore', 'R:{n}', 's1'], incus: ['snapshot', 'restore', 'R:{n}', 's1'] },
  // Finding 6: each refusal on the daemon's channel (a failed operation, not a synchronous error) and with its text.
  { args: ['snapshot', 'restore', 'R:{n}', 'nosuch'], only: 'incus' },
  { args: ['query', '-X', 'PUT', 'R:/1.0/instances/{n}', '--data', '{"restore":"nosuch"}'], only: 'incus', transform: operationOrError },
  { args: ['query', '-X', 'PUT', '--wait', 'R:/1.0/instances/{n}', '--data', '{"restore":"nosuch"}'], only: 'incus' },
  { args: ['init', 'R:reflex-busybox', 'R:{n}', ...init], only: 'incus' },
  { args: ['query', '-X', 'POST', 'R:/1.0/instances', '--data', createBody('{n}')], only: 'incus', transform: operationOrError },
  { args: ['query', '-X', 'POST', '--wait', 'R:/1.0/instances', '--data', createBody('{n}')], only: 'incus' },
  { args: ['init', 'R:reflex-busybox', 'R:{n}-bad', ...init, '-c', 'limits.memory=notanumber'], only: 'incus' },
  {
    args: ['query', '-X', 'POST', 'R:/1.0/instances', '--data', createBody('{n}-bad', { 'limits.memory': 'notanumber' })],
    only: 'incus',
    transform: operationOrError,
  },
  { args: ['query', '-X', 'POST', '--wait', 'R:/1.0/instances', '--data', createBody('{n}-bad', { 'security.privileged': 'maybe' })], only: 'incus' },
  { args: ['list', 'R:{n}-bad', '--format', 'csv', '-c', 'ns'], only: 'incus' },
  { args: ['copy', 'R:{n}/s1', 'R:{copy}'] },
  { args: ['list', 'R:{copy}', '--format', 'csv', '-c', 'nstS'] },
  { args: ['config', 'get', 'R:{copy}', 'raw.lxc'] },
  { args: ['delete', 'R:{n}'] },
  { args: ['pause', 'R:{n}'] },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'ns'] },
  { args: ['start', 'R:{n}'] },
  { args: ['pause', 'R:{n}'] },
  // A graceful stop of a paused instance never ends on Incus 6.0 with the test bed's init (the
  // instance thaws, Running, and the stop operation stays Running): the incus run forces it.
  { args: ['stop', 'R:{n}'], incus: ['stop', 'R:{n}', '--force'] },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'ns'] },
  { args: ['start', 'R:{n}'] },
  // A graceful restart sent before the test bed's init has set its trap is lost (pid 1 ignores a
  // signal it has no handler for) and waits for ever: wait until pid 1 catches SIGPWR (bit 29 of
  // SigCgt). The simulator's /proc/1/status has no SigCgt line: nothing to wait for.
  {
    args: [
      'exec',
      'R:{n}',
      '--',
      'sh',
      '-c',
      'c() { sed -n "s/^SigCgt:[[:space:]]*//p" /proc/1/status; }; m=$(c); while [ -n "$m" ] && [ $(( 0x$m >> 29 & 1 )) = 0 ]; do sleep 0.1; m=$(c); done',
    ],
  },
  { args: ['restart', 'R:{n}'] },
  { args: ['list', 'R:{n}', '--format', 'csv', '-c', 'ns'] },
  { args: ['exec', 'R:{n}', '--', 'sh', '-c', 'echo carried > /root/rt-published'] },
  { args: ['stop', 'R:{n}'] },
  { args: ['stop', 'R:{n}'] },
  // Issue #41 item 7: the console log, stopped (after a start) and running; LXD 5.0.2 cannot read a running one's.
  { args: ['console', 'R:{n}', '--show-log'] },
  { args: ['exec', 'R:{n}', '--', 'true'] },
  // Issue #41 item 6: an instance launched from a published image has the files the published one had.
  { args: ['publish', 'R:{n}', 'R:', '--alias', '{n}-img'] },
  { args: ['launch', 'R:{n}-img', 'R:{n}-pub', ...init] },
  { args: ['exec', 'R:{n}-pub', '--', 'cat', '/root/rt-published'] },
  { args: ['delete', 'R:{n}-pub', '--force'] },
  { args: ['image', 'delete', 'R:{n}-img'] },
  // Issue #41 item 3: an image upload without a Content-Type, as pylxd's `client.images.create(data)`
  // sends one and no client here does: the published image exported, deleted, and its tarball sent
  // again by curl; the same bytes make the same image, and an instance from it has the published file.
  { args: ['publish', 'R:{n}', 'R:', '--alias', '{n}-img'] },
  { args: ['image', 'export', 'R:{n}-img', '{local}/up'] },
  { args: ['image', 'delete', 'R:{n}-img'] },
  { args: ['-H', 'Content-Type:', '--data-binary', '@{local}/up.tar.gz', 'R:/1.0/images'], program: 'curl' },
  { args: ['R:{.operation}/wait'], program: 'curl', transform: imageSize },
  { args: ['image', 'alias', 'create', 'R:{n}-img', '{.metadata.metadata.fingerprint}'] },
  { args: ['image', 'info', 'R:{n}-img'], transform: sortedProperties },
  { args: ['launch', 'R:{n}-img', 'R:{n}-pub', ...init] },
  { args: ['exec', 'R:{n}-pub', '--', 'cat', '/root/rt-published'] },
  { args: ['delete', 'R:{n}-pub', '--force'] },
  { args: ['image', 'delete', 'R:{n}-img'] },
  { args: ['launch', 'R:reflex-busybox', 'R:{launched}', ...init] },
  { args: ['info', 'R:{launched}', '--show-log'], transform: withoutLogLines },
  { args: ['console', 'R:{launched}', '--show-log'] },
  { args: ['storage', 'info', 'R:default'], keepLines: onlyOurInstances },
  { args: ['list', 'R:rt-dx', '--format', 'csv', '-c', 'ns'], keepLines: (l, names) => onlyOurInstances(`- ${l.split(',')[0]}`, names) },
  {
    args: ['list', 'R:rt-dx', '--all-projects', '--format', 'csv', '-c', 'ns'],
    keepLines: (l, names) => onlyOurInstances(`- ${l.split(',')[1]}`, names),
  },
  { args: ['image', 'alias', 'list', 'R:', 'reflex-busybox'] },
  { args: ['profile', 'create', 'R:{n}-prof'] },
  { args: ['profile', 'set', 'R:{n}-prof', 'user.from-profile', 'yes'] },
  { args: ['profile', 'set', 'R:{n}-prof', 'bogus.key', 'yes'] },
  { args: ['profile', 'add', 'R:{launched}', '{n}-prof'] },
  { args: ['profile', 'show', 'R:{n}-prof'] },
  { args: ['config', 'show', 'R:{launched}', '--expanded'] },
  { args: ['profile', 'delete', 'R:{n}-prof'] },
  { args: ['profile', 'remove', 'R:{launched}', '{n}-prof'] },
  { args: ['profile', 'delete', 'R:{n}-prof'] },
  { args: ['profile', 'show', 'R:{n}-prof'] },
  { args: ['profile', 'delete', 'R:default'] },
  { args: ['profile', 'rename', 'R:default', '{n}-renamed'] },
  { args: ['query', 'R:/1.0/images/nosuch'] },
  { args: ['query', 'R:/1.0/instances/{launched}/snapshots/nosuch'] },
  { args: ['project', 'create', 'R:{n}-proj'] },
  { args: ['project', 'show', 'R:{n}-proj'] },
  { args: ['list', 'R:', '--project', '{n}-proj', '--format', 'csv'] },
  { args: ['profile', 'list', 'R:', '--project', '{n}-proj', '--format', 'csv'] },
  { args: ['project', 'delete', 'R:{n}-proj'] },
  { args: ['project', 'show', 'R:{n}-proj'] },
  { args: ['project', 'list', 'R:', '--format', 'csv'], transform: usedByCount },
  { args: ['profile', 'list', 'R:', '--format', 'csv'], transform: usedByCount },
  { args: ['profile', 'show', 'R:default'], keepLines: onlyOurInstances },
  { args: ['cluster', 'list', 'R:'] },
  { args: ['query', 'R:/1.0/instances/{n}/state'] },
  { args: ['delete', 'R:{launched}', '--force'] },
  { args: ['delete', 'R:{copy}'] },
  { args: ['delete', 'R:{n}'] },
  { args: ['list', 'R:rt-dx', '--format', 'csv'], keepLines: (l, names) => onlyOurInstances(`- ${l.split(',')[0]}`, names) },
  { args: ['info', 'R:{n}'] },
  { args: ['config', 'show', 'R:{n}'] },
];

/** The steps one client's suite runs, each with its arguments for that client. */
export function stepsFor(client: Client): (ScenarioStep & { args: string[] })[] {
  return scenario
    .filter((step) => (step.only ?? client) === client && !(client === 'incus' && step.incus === false))
    .map((step) => ({ ...step, args: client === 'incus' && step.incus ? step.incus : step.args }));
}

/**
 * The arguments of a step for one remote and run; `local` is the side's own directory on the host,
 * `reply` the JSON the last curl step printed, `base` the remote's URL for a curl step.
 */
export function argsFor(step: ScenarioStep, remote: string, names: Names, local = '', reply?: unknown, base?: string): string[] {
  const field = (path: string): string => {
    const v = path.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), reply);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : `{.${path}}`;
  };
  return step.args.map((a) =>
    (step.program === 'curl' && base !== undefined ? a.replace(/^R:/, base) : a)
      .replaceAll('R:', `${remote}:`)
      .replace(/\{\.([\w.]+)\}/g, (_, path: string) => field(path))
      .replaceAll('{copy}', names.copy)
      .replaceAll('{launched}', names.launched)
      .replaceAll('{n}', names.n)
      .replaceAll('{local}', local),
  );
}

/** The files under `dir` (relative paths, sorted) with their contents, as text to compare. */
function treeOf(dir: string): string {
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile()).sort();
  return files.map((f) => `--- {local}/${f}\n${readFileSync(join(dir, f), 'utf8')}`).join('');
}

/** Display form of a step, for test names. */
export function titleOf(step: ScenarioStep, client: Client = 'lxc'): string {
  return `${step.program ?? client} ${step.args.join(' ')}`;
}

/** One command's normalised result on the real daemon and on the simulator, by step index. */
export type DifferentialResults = Map<string, { real: LxcResult; sim: LxcResult }>;

/**
 * Runs `steps` with the client of `t` against the real daemon (remote `local`) and then against the
 * simulator (remote `sim`, already added), each result normalised for comparison. The simulator's
 * default profile loses its NIC and its `data` volume first: the test beds' have neither.
 */
export async function runDifferential(t: SimRemote, steps: ScenarioStep[], names: Names, client: Client): Promise<DifferentialResults> {
  await t.lxc.ok(['profile', 'device', 'remove', 'sim:default', 'eth0']);
  await t.lxc.ok(['storage', 'volume', 'delete', 'sim:default', 'data']);
  const results: DifferentialResults = new Map();
  // Each step's normalised result on the simulator, which the real side's exec re-runs compare with.
  const simSettled: ((r: LxcResult) => void)[] = [];
  const simResults = steps.map(() => new Promise<LxcResult>((resolve) => simSettled.push(resolve)));
  // The two sides run at once: the simulator's does not wait on the daemon, so the daemon's lock
  // is held for the longer side instead of both. Each side has its own local directory and replies.
  const runSide = async (remote: 'local' | 'sim', side: 'real' | 'sim'): Promise<void> => {
    const local = join(t.lxc.confDir, `local-${side}`);
    mkdirSync(local);
    const target = curlTarget(t, remote, client);
    let reply: unknown;
    for (const [i, step] of steps.entries()) {
      const args = argsFor(step, remote, names, local, reply, target.base);
      let res: LxcResult;
      if (step.program === 'curl') {
        res = await runCurl([...target.options, ...args]);
        reply = parsedOrUndefined(res.stdout);
        res = { ...res, stdout: prettyJson(res.stdout) };
      } else res = await t.lxc.run(args, { timeoutMs: 60_000, input: step.input });
      if (step.localTree) res = { ...res, stdout: `${res.stdout}${treeOf(local)}` };
      res = { ...res, stdout: res.stdout.replaceAll(local, '{local}'), stderr: res.stderr.replaceAll(local, '{local}') };
      // The real daemons can lose part or all of an exec's output (LXD 5.0.2's race,
      // canonical/lxd#11890; CI runs saw Incus 6.0 print nothing for a command that prints two
      // lines, and drop a shell's "not found" line while the client's own error line came through).
      // The race only ever loses output, and two runs can lose the same (a CI run saw a script's
      // three lines lost twice over, and another LXD 5.0.2 lose two of `sh -c`'s three lines of stdout
      // in three runs running), so agreeing runs prove nothing. A real exec runs again, five runs at
      // most (as the pty test's sessions), until one prints what the simulator printed: every run is
      // output the daemon really gave. When none does, the run that printed the most stands for the
      // daemon. The exec steps only read or rewrite the same file, so running one again changes nothing.
      const normalise = (r: LxcResult) => normalised(r, remote, step.keepLines ? (l) => step.keepLines!(l, names) : undefined, step.transform);
      let result = normalise(res);
      if (side === 'sim') simSettled[i]!(result);
      else if (step.args[0] === 'exec') {
        const sim = (await simResults[i])!;
        const same = (r: LxcResult) => r.code === sim.code && r.stdout === sim.stdout && r.stderr === sim.stderr;
        const printed = (r: LxcResult) => r.stdout.length + r.stderr.length;
        for (let runs = 1; runs < 5 && !same(result); runs++) {
          const next = normalise(await t.lxc.run(args, { timeoutMs: 60_000, input: step.input }));
          if (same(next) || printed(next) > printed(result)) result = next;
        }
      }
      const entry = results.get(`${i}`) ?? ({} as { real: LxcResult; sim: LxcResult });
      entry[side] = result;
      results.set(`${i}`, entry);
      if (process.env.REFLEX_DIFF_DEBUG) process.stderr.write(`[${side}] ${titleOf(step, client)} → ${res.code}\n${res.stdout}${res.stderr}\n`);
    }
  };
  await Promise.all([runSide('local', 'real'), runSide('sim', 'sim')]);
  return results;
}

/**
 * How curl reaches a remote as the client does: the real daemon's unix socket; the simulator's
 * HTTPS address with the client certificate its remote was added with (its self-signed server
 * certificate, which the client pinned at `remote add`, is not checked).
 */
function curlTarget(t: SimRemote, remote: 'local' | 'sim', client: Client): { base: string; options: string[] } {
  if (remote === 'sim')
    return {
      base: t.sim.httpsUrl!,
      options: ['--cert', join(t.lxc.confDir, 'client.crt'), '--key', join(t.lxc.confDir, 'client.key'), '--insecure'],
    };
  return { base: 'http://daemon', options: ['--unix-socket', (client === 'incus' ? INCUS_SOCKET : lxdSocketPath()) ?? ''] };
}

/** Runs curl with `args`; what it printed and how it exited. */
function runCurl(args: string[]): Promise<LxcResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['--silent', '--show-error', '--max-time', '60', ...args],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : undefined) : 0;
        if (code === undefined) reject(err!);
        else resolve({ stdout, stderr, code });
      },
    );
  });
}

/** The JSON value of `text`, or undefined when it is none. */
const parsedOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** JSON printed two spaces a level, keys in the order they came (the daemons' own order), so that a difference shows as a line. */
const prettyJson = (text: string): string => {
  const parsed = parsedOrUndefined(text);
  return parsed === undefined ? text : `${JSON.stringify(parsed, null, 2)}\n`;
};

function normalised(r: LxcResult, remote: string, keep?: (line: string) => boolean, transform?: (text: string) => string): LxcResult {
  const tidy = (s: string): string => {
    const text = normaliseOutput(s, { remote });
    const kept = keep ? text.split('\n').filter(keep).join('\n') : text;
    return transform ? transform(kept) : kept;
  };
  return { stdout: tidy(r.stdout), stderr: tidy(r.stderr), code: r.code };
}
