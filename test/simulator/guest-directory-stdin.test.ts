import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * `cmd < DIR`: busybox's sh opens the directory, and the program's read fails (EISDIR), each
 * program saying so its own way. The expected answers are LXD 5.0.2's (busybox image).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('d');
});
afterAll(() => guest.close());

describe('a directory as a program’s stdin', () => {
  it('fails the program that reads it, with busybox’s words, and not the shell', async () => {
    const res = await guest.sh(
      'cat < /tmp; echo "rc=$?"; wc < /tmp; echo "rc=$?"; wc -l < /tmp; echo "rc=$?"; head < /tmp; echo "rc=$?"; tail < /tmp; echo "rc=$?"; ' +
        'md5sum < /tmp; echo "rc=$?"; od < /tmp; echo "rc=$?"; tee < /tmp; echo "rc=$?"; { cat; } < /tmp; echo "rc=$?"',
    );
    expect(res.stdout).toBe('rc=1\n        0         0         0\nrc=1\n0\nrc=1\nrc=1\nrc=1\nrc=1\n0000000\nrc=1\nrc=1\nrc=1\n');
    expect(res.stderr).toBe(
      'cat: read error: Is a directory\n' +
        'wc: standard input: Is a directory\n' +
        'wc: standard input: Is a directory\n' +
        'head: standard input: Input/output error\n' +
        'tail: read error: Is a directory\n' +
        "md5sum: can't read '-': Is a directory\n" +
        'od: standard input: read error\n' +
        'cat: read error: Is a directory\n',
    );
  });

  it('is read as empty by a program that does not fail on it, and left alone by one that does not read it', async () => {
    const res = await guest.sh(
      'sort < /tmp; echo "rc=$?"; grep x < /tmp; echo "rc=$?"; read x < /tmp; echo "rc=$?"; echo hi < /tmp; wc -l /etc/passwd < /tmp | cut -c1-2; ' +
        'cat < /tmp | wc -c',
    );
    expect(res).toMatchObject({ stdout: 'rc=0\nrc=1\nrc=1\nhi\n1 \n0\n', stderr: 'cat: read error: Is a directory\n' });
  });

  it('opened for reading and writing (<>) is refused by the shell and left a directory', async () => {
    const res = await guest.sh('cat <> /tmp; echo "rc=$?"; test -d /tmp && echo dir');
    expect(res).toMatchObject({ stdout: 'rc=1\ndir\n', stderr: "sh: can't create /tmp: Is a directory\n" });
  });
});
