import { describe, expect, it } from 'vitest';
import { ProgramOutput } from '../../src/simulator/guest/program-output.js';

describe("a guest program's output", () => {
  // A program that writes line by line (cut, od, sort, cat -n over a long file) makes tens of
  // thousands of writes. Each used to hand the whole output so far to a setter that searched it:
  // 65,536 lines took minutes and ran out of memory.
  it('takes 65,536 writes, kept whole and in order with the messages between them', () => {
    const o = new ProgramOutput();
    for (let i = 0; i < 65_536; i++) {
      o.out(`line ${i}\n`);
      if (i % 16_384 === 0) o.err(`message ${i}\n`);
    }
    const r = o.result(1);
    expect(r.stdout.split('\n')).toHaveLength(65_537);
    expect(r.stderr).toBe('message 0\nmessage 16384\nmessage 32768\nmessage 49152\n');
    const order = r.jbLog!.map(([fd, text]) => `${fd}:${text.split(' ')[0]}`);
    expect(order.indexOf('2:message')).toBe(1);
    expect(order).toHaveLength(65_540);
  });

  it('keeps text written before bytes as its UTF-8 bytes', () => {
    const o = new ProgramOutput();
    o.out('é');
    o.bytes(Buffer.from([0xff]));
    o.out('x');
    expect(Buffer.from(o.result(0).stdout, 'latin1')).toEqual(Buffer.from([0xc3, 0xa9, 0xff, 0x78]));
  });
});
