import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** head's and tail's counts as busybox 1.35 reads them; the expected answers are LXD 5.0.2's (the reflex-busybox image). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('c');
});
afterAll(() => guest.close());

describe('head and tail counts', () => {
  it('takes a first +N as -n +N, -c +N from the Nth byte, and - as stdin', async () => {
    const res = await guest.sh(
      'cd /tmp; printf "1\\n2\\n3\\n" > t3; tail +2 t3; for n in 0 1 3 6 7; do tail -c +$n t3 | od -An -c; done; echo x | tail -n 1 -; printf "\\351t\\351\\n" | tail -c +2 | od -An -tx1',
    );
    expect(res.stdout).toBe('2\n3\n   1  \\n   2  \\n   3  \\n\n   1  \\n   2  \\n   3  \\n\n   2  \\n   3  \\n\n  \\n\nx\n 74 e9 0a\n');
    expect(res.stderr).toBe('');
  });

  it('head prints all but the last N with -n -N and -c -N, reads - as standard input, and has busybox options', async () => {
    const res = await guest.sh(
      'cd /tmp; printf "1\\n2\\n3\\n" > h3; printf "ab\\ncd" > h2; head -n -1 h3; head -c -2 h3 | od -An -c; head -q h3 h2; echo; ' +
        'echo x | head -n 1 - h2; echo; head -n 1k h3 | wc -l; head -c 1b h3 | wc -c; head -n x h3; echo $?; head -z; echo $?',
    );
    expect(res.stdout).toBe('1\n2\n   1  \\n   2  \\n\n1\n2\n3\nab\ncd\n==> standard input <==\nx\n\n==> h2 <==\nab\n\n3\n6\n1\n1\n');
    expect(res.stderr.split('\n').slice(0, 3).join('\n')).toBe(
      "head: invalid number 'x'\nhead: invalid option -- 'z'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.",
    );
  });

  it('passes UTF-8 text through head, tail, zcat and tar -O as it is, and bytes that are not text byte for byte', async () => {
    const res = await guest.sh(
      'cd /tmp; printf "\\303\\251\\n" > u8; head -1 u8; tail -c +1 u8; gzip -c u8 | zcat; tar cf u8.tar u8; tar xOf u8.tar; printf "\\377\\n" | head -1',
    );
    expect(Buffer.from(res.stdout, 'utf8').toString('hex')).toBe(`${'c3a90a'.repeat(4)}${Buffer.from('\ufffd\n').toString('hex')}`);
  });
});
