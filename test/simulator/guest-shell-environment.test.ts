import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The environment a program is given: the shell's exported variables, not all of them. The
 * expected answers are LXD 5.0.2's (busybox image).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('e');
});
afterAll(() => guest.close());

describe('the exported environment', () => {
  it('is what env lists: not a variable the script set without export, nor the shell’s own ($?)', async () => {
    const res = await guest.sh("X=1; export Y=2; env | grep -E '^(X|Y|PWD|SHLVL|HOME|[?])=' | sort");
    expect(res.stdout).toBe('HOME=/root\nPWD=/root\nSHLVL=1\nY=2\n');
  });

  it('reaches a program run by env with what env was given, and nothing env was told to leave out', async () => {
    const res = await guest.sh(
      'env Z=1 sh -c \'echo "Z=$Z"\'; env -i A=1 env; env - W=2 env; env -u HOME env | grep -c HOME; env -u HOME sh -c \'echo "[$HOME]"\'',
    );
    expect(res.stdout).toBe('Z=1\nA=1\nW=2\n0\n[]\n');
  });

  it('is what a child shell sees: an exported variable, one exported by set -a, one given for the command alone', async () => {
    const res = await guest.sh(
      'A=1; sh -c \'echo "[$A]"\'; export A; sh -c \'sh -c "echo \\$A"\'; X=2 sh -c \'echo "X=$X"\'; echo "[$X]"; set -a; B=3; env | grep ^B',
    );
    expect(res.stdout).toBe('[]\n1\nX=2\n[]\nB=3\n');
  });

  it('stays what it was for the EXIT trap, which runs after the script in the state it left', async () => {
    const res = await guest.sh('trap \'env | grep -E "^(X|Y)="; sh -c "echo [\\$X\\$Y]"\' EXIT; X=1; export Y=2; exit 3');
    expect(res).toMatchObject({ stdout: 'Y=2\n[2]\n', exitCode: 3 });
  });

  it('is listed by export -p as ash lists it, quoted by its single_quote', async () => {
    const res = await guest.sh("export A=\"it's\" B='' D=\"a''b\"; export -p | grep -E '^export (A|B|D|HOME)='; export | grep -c '^export HOME='");
    expect(res.stdout).toBe("export A='it'\"'\"'s'\nexport B=''\nexport D='a'\"''\"'b'\nexport HOME='/root'\n1\n");
  });
});
