import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Guest shell behaviours that were left over from the busybox sh on the LXD 5.0.2 test bed
 * (each expected output was recorded there).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('hxl');
});

afterAll(() => guest.close());

const sh = (script: string) => guest.sh(script);

describe("a program's raw bytes beside its stderr", () => {
  it('pass through 2>/dev/null, 2>&1 and 2>FILE, in groups, subshells, functions, loops and pipelines', async () => {
    const script = [
      "cd /tmp; printf 'hi\\n' > f",
      'bzip2 -c f nosuch 2>/dev/null | bzcat; echo "a $?"',
      '{ gzip -c f nosuch 2>/dev/null; } | zcat; echo "b $?"',
      '(bzip2 -c f nosuch 2>/tmp/e) | bzcat; cat /tmp/e; echo "c $?"',
      'gzip -c f nosuch 2>/dev/null > /tmp/o.gz; zcat /tmp/o.gz; echo "d $?"',
      "{ printf '\\377'; cat nosuch; printf '\\376'; } 2>/dev/null | od -An -tx1",
      "( printf '\\375'; cat nosuch; printf '\\374'; ) 2>&1 | od -An -c",
      'gzip -c f nosuch 2>&1 | wc -l',
      'f() { bzip2 -c f nosuch; }; f 2>/dev/null | bzcat; echo "e $?"',
      'for i in 1; do gzip -c f nosuch; done 2>/tmp/e2 | zcat; cat /tmp/e2',
    ].join('\n');
    const r = await sh(script);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        'hi',
        'a 0',
        'hi',
        'b 0',
        'hi',
        'bzip2: nosuch: No such file or directory',
        'c 0',
        'hi',
        'd 0',
        ' ff fe',
        " 375   c   a   t   :       c   a   n   '   t       o   p   e   n",
        "       '   n   o   s   u   c   h   '   :       N   o       s   u",
        '   c   h       f   i   l   e       o   r       d   i   r   e   c',
        '   t   o   r   y  \\n 374',
        '1',
        'hi',
        'e 0',
        'hi',
        'gzip: nosuch: No such file or directory',
        '',
      ].join('\n'),
    );
  });
});
