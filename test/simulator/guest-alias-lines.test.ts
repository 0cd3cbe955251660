import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's sh expands an alias as it parses, a line at a time: an alias defined (or removed) on
 * a line serves from the next line on. The expected answers are LXD 5.0.2's (busybox image).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('a');
});
afterAll(() => guest.close());

describe('an alias and the line that defines it', () => {
  it('does not serve the rest of its own line, compound commands on it included; it serves the next line', async () => {
    const res = await guest.sh('alias x=echo && x hi; echo "rc=$?"\nx there\nif true; then alias y=echo; y a; fi; y b\ny c');
    expect(res).toMatchObject({ stdout: 'rc=127\nthere\nc\n', stderr: 'sh: x: not found\nsh: y: not found\nsh: y: not found\n' });
  });

  it('is still expanded on the line that removes it, and by eval, which parses when it runs', async () => {
    const res = await guest.sh('alias x=echo\nf() { x in-f; }; unalias x; f; x gone\nalias z=echo; eval z evaluated');
    expect(res).toMatchObject({ stdout: 'in-f\ngone\nevaluated\n', stderr: '' });
  });
});
