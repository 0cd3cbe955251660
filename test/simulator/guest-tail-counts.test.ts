import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** tail's counts as busybox 1.35 reads them; the expected answers are LXD 5.0.2's (the reflex-busybox image). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('c');
});
afterAll(() => guest.close());

describe('tail counts', () => {
  it('takes a first +N as -n +N, -c +N from the Nth byte, and - as stdin', async () => {
    const res = await guest.sh(
      'cd /tmp; printf "1\\n2\\n3\\n" > t3; tail +2 t3; for n in 0 1 3 6 7; do tail -c +$n t3 | od -An -c; done; echo x | tail -n 1 -; printf "\\351t\\351\\n" | tail -c +2 | od -An -tx1',
    );
    expect(res.stdout).toBe('2\n3\n   1  \\n   2  \\n   3  \\n\n   1  \\n   2  \\n   3  \\n\n   2  \\n   3  \\n\n  \\n\nx\n 74 e9 0a\n');
    expect(res.stderr).toBe('');
  });
});
