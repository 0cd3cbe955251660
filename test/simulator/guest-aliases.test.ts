import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { singleQuote } from '../../src/simulator/guest/shell-aliases.js';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** busybox ash's alias and unalias, as the LXD 5.0.2 test bed answers (recorded there; the lxc differential holds the same line). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('a');
});

afterAll(() => guest.close());

describe('alias and unalias', () => {
  it("define, list in ash's table order with its quoting, expand on a later line, and refuse what is not there", async () => {
    const r = await guest.sh(
      [
        'unalias; echo $?; alias b=1 a=2 c=3 aa=4; alias; unalias -a; alias; echo $?',
        `alias x="'q'"; alias x; alias -p; echo $?; alias 'q=it'\\''s'; alias q; unalias x nosuch; echo $?`,
        'alias say=echo',
        'say hi',
      ].join('\n'),
    );
    expect(r.stdout).toBe(['0', "c='3'", "a='2'", "b='1'", "aa='4'", '0', `x=''"'"'q'"'"`, '1', `q='it'"'"'s'`, '1', 'hi', ''].join('\n'));
    expect(r.stderr).toBe('alias: -p not found\nunalias: nosuch not found\n');
  });

  it('are not variables: set and env list none of them', async () => {
    const r = await guest.sh("alias ll='ls -l'; set | grep -c ll; env | grep -c ll; alias");
    expect(r.stdout).toBe(['0', '0', "ll='ls -l'", ''].join('\n'));
  });

  it("quotes as ash's single_quote: runs in '…', quotes in \"…\"", () => {
    expect(singleQuote("it's")).toBe(`'it'"'"'s'`);
    expect(singleQuote("''a")).toBe(`''"''"'a'`);
    expect(singleQuote('')).toBe("''");
  });
});
