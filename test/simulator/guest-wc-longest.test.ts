import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** wc -L as busybox 1.35 counts it; the expected answers are LXD 5.0.2's (the reflex-busybox image). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('w');
});
afterAll(() => guest.close());

describe('wc -L', () => {
  it('counts the longest line (a tab to the next multiple of 8) with the other counts in busybox order', async () => {
    const res = await guest.sh(
      'cd /tmp; printf "1\\n2\\n3\\n" > t3; printf "ab\\ncd" > t2; printf "a\\tbc\\n\\ttoo long line  \\nx\\vyz\\rq\\n\\001\\002 w\\351\\n" > w4; mkdir -p dd1; ' +
        'wc -L t3; wc -lL t2 t3; wc -L -c t2; wc -lwmcL w4; wc -L w4 dd1 nosuch; echo $?; printf "  a b\\n" | wc -wL -',
    );
    expect(res.stdout).toBe(
      '1 t3\n        1         2 t2\n        3         1 t3\n        4         2 total\n        5         2 t2\n' +
        '        4         9        35        35        23 w4\n       23 w4\n        0 dd1\n       23 total\n1\n        2         5 -\n',
    );
    expect(res.stderr).toBe('wc: dd1: Is a directory\nwc: nosuch: No such file or directory\n');
  });
});
