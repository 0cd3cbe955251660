import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** Aliases are no variables in busybox's sh, as the LXD 5.0.2 test bed answers (recorded there). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('av');
});

afterAll(() => guest.close());

describe('an alias', () => {
  it('is not the variable BASH_ALIAS_<name>, and that variable is no alias', async () => {
    const r = await guest.sh(
      [
        'alias x=ls',
        'echo "[${BASH_ALIAS_x}]"; BASH_ALIAS_y=echo; y hi; echo $?; set | grep -c BASH_ALIAS; export BASH_ALIAS_z=1; env | grep BASH_ALIAS; alias; type x; command -v x',
      ].join('\n'),
    );
    expect(r.stdout).toBe(['[]', '127', '1', 'BASH_ALIAS_z=1', "x='ls'", 'x is an alias for ls', "alias x='ls'", ''].join('\n'));
    expect(r.stderr).toBe('sh: y: not found\n');
  });
});
