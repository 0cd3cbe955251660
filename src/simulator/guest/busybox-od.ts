import type { Command, CommandContext, ExecResult } from 'just-bash';
import { isDirectory, readOperand } from './busybox-reads.js';
import { ProgramOutput } from './program-output.js';

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });
const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** An operand's bytes (a directory: none, its read fails), or what od says when it does not open. */
async function operand(ctx: CommandContext, f: string): Promise<Buffer | string> {
  const r = await readOperand(ctx, f);
  if ('error' in r) return `od: ${f}: ${r.error}\n`;
  return 'directory' in r ? Buffer.alloc(0) : r;
}

/**
 * busybox's `od` (just-bash's pads and lacks `-x`): the formats `-c -b -x -o -d -t x1|x2|o1|o2|d2|u1|d1`,
 * `-An`, `-v`, other options to just-bash's. Its operands are one stream: one that does not open
 * is said (`od: F: why`) and the next read, a directory is a `read error`, each message where the
 * stream reaches it (status 1).
 */
export function odCommand(): Command {
  return {
    name: 'od',
    async execute(args, ctx) {
      let format = 'o2';
      let address = true;
      let verbose = false;
      const files: string[] = [];
      // getopt: flags may share an argument, and -A and -t take the rest of theirs or the next one (-tx1 is -t x1).
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (!a.startsWith('-') || a === '-') {
          files.push(a);
          continue;
        }
        for (let j = 1; j < a.length; j++) {
          const letter = a[j]!;
          if (letter === 'A' || letter === 't') {
            const value = j + 1 < a.length ? a.slice(j + 1) : (args[++i] ?? '');
            // -A reads the first letter of its value only (-Anv is -A n).
            if (letter === 'A' && !'doxn'.includes(value[0] ?? '-'))
              return fail(`od: bad output address radix '${value[0] ?? ''}' (must be [doxn])\n`);
            if (letter === 'A') address = value[0] !== 'n';
            else format = { x1: 'x1', x2: 'x2', o1: 'o1', o2: 'o2', d2: 'd2', u2: 'd2', c: 'c', u1: 'u1', d1: 'd1' }[value] ?? 'x1';
            break;
          }
          if (letter === 'v') verbose = true;
          else if ('cbxod'.includes(letter)) format = { c: 'c', b: 'o1', x: 'x2', o: 'o2', d: 'd2' }[letter]!;
          else return ctx.origCommand ? ctx.origCommand(args) : fail(`od: invalid option -- '${letter}'\n`);
        }
      }
      // The operands are one stream; what od says of one (it does not open, or reading it fails) comes
      // when the stream reaches it: after the rows that end before it (od_bloaty.c's read_block opens
      // the next file only when a row still needs bytes).
      const o = new ProgramOutput();
      const chunks: Buffer[] = [];
      const notes: { at: number; message: string }[] = [];
      let size = 0;
      // With no operand opened, od ends at the first read (open_next_file finds none): no last offset.
      let opened = false;
      for (const f of files.length ? files : ['-']) {
        const read = await operand(ctx, f);
        if (typeof read === 'string') notes.push({ at: size, message: read });
        else {
          opened = true;
          chunks.push(read);
          size += read.length;
          if (f !== '-' && (await isDirectory(ctx.fs, ctx.cwd, f))) notes.push({ at: size, message: `od: ${f}: read error\n` });
        }
      }
      const data = Buffer.concat(chunks);
      const say = (upTo: number): void => {
        while (notes.length && notes[0]!.at <= upTo) o.err(notes.shift()!.message);
      };
      const escapes: Record<number, string> = { 0: '\\0', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
      const cell = (row: Buffer, i: number): string => {
        const b = row[i]!;
        const word = b + (row[i + 1] ?? 0) * 256;
        switch (format) {
          case 'c':
            return (escapes[b] ?? (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : b.toString(8).padStart(3, '0'))).padStart(4);
          case 'o1':
            return ` ${b.toString(8).padStart(3, '0')}`;
          case 'x1':
            return ` ${hex(b, 2)}`;
          case 'u1':
            return ` ${String(b).padStart(3)}`;
          case 'd1':
            return ` ${String(b > 127 ? b - 256 : b).padStart(4)}`;
          case 'x2':
            return ` ${hex(word, 4)}`;
          case 'd2':
            return ` ${String(word).padStart(5)}`;
          default:
            return ` ${word.toString(8).padStart(6, '0')}`;
        }
      };
      const step = /2$/.test(format) ? 2 : 1;
      let previous: string | undefined;
      let starred = false;
      say(0);
      for (let at = 0; at < data.length; at += 16) {
        const row = data.subarray(at, at + 16);
        // A row short of 16 bytes is the last: od met every operand's end before printing it.
        say(row.length === 16 ? at : Infinity);
        if (!verbose && row.length === 16 && row.toString('hex') === previous) {
          if (!starred) o.out('*\n');
          starred = true;
          continue;
        }
        previous = row.toString('hex');
        starred = false;
        let cells = '';
        for (let i = 0; i < row.length; i += step) cells += cell(row, i);
        o.out(`${address ? at.toString(8).padStart(7, '0') : ''}${cells}\n`);
      }
      say(Infinity);
      if (address && opened) o.out(`${data.length.toString(8).padStart(7, '0')}\n`);
      return o.result(o.stderr ? 1 : 0);
    },
  };
}
