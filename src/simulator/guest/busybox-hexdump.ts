import type { Command, CommandContext } from 'just-bash';
import { banner, getopt, helpAsked, isResult, suffixed } from './busybox-getopt.js';
import { bytesOutput } from './bytes-output.js';
import { ProgramOutput } from './program-output.js';

/** The bytes of a file operand (`-` or none: stdin), or the message the program prints for it (busybox-files.ts's reader). */
export type ReadInput = (ctx: CommandContext, program: string, file: string | undefined) => Promise<Buffer | string>;

const hexdumpUsage =
  'Usage: hexdump [-bcdoxCv] [-e FMT] [-f FMT_FILE] [-n LEN] [-s OFS] [FILE]...\n\nDisplay FILEs (or stdin) in a user specified format\n\n' +
  '\t-b\t\t1-byte octal display\n\t-c\t\t1-byte character display\n\t-d\t\t2-byte decimal display\n\t-o\t\t2-byte octal display\n' +
  '\t-x\t\t2-byte hex display\n\t-C\t\thex+ASCII 16 bytes per line\n\t-v\t\tShow all (no dup folding)\n\t-e FORMAT_STR\tExample: \'16/1 "%02x|""\\n"\'\n' +
  '\t-f FORMAT_FILE\n\t-n LENGTH\tShow only first LENGTH bytes\n\t-s OFFSET\tSkip OFFSET bytes\n';

const xxdUsage =
  'Usage: xxd [-pri] [-g N] [-c N] [-n LEN] [-s OFS] [-o OFS] [FILE]\n\nHex dump FILE (or stdin)\n\n' +
  '\t-g N\t\tBytes per group\n\t-c N\t\tBytes per line\n\t-p\t\tShow only hex bytes, assumes -c30\n\t-i\t\tC include file style\n' +
  '\t-l LENGTH\tShow only first LENGTH bytes\n\t-s OFFSET\tSkip OFFSET bytes\n\t-o OFFSET\tAdd OFFSET to displayed offset\n' +
  '\t-r\t\tReverse (with -p, assumes no offsets in input)\n';

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const printable = (b: number): string => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.');
/** libbb's xatoul_sfx with the dump programs' suffixes (`b` 512, `k` 1024, `m` 1024²). */
const number = (text: string): number | undefined => suffixed(text, { b: 512, k: 1024, m: 1024 * 1024 });
const escapes: Record<number, string> = { 0: '\\0', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };

/** One of hexdump's canned formats: the width of its address, and a row's text after it (16 bytes a row). */
interface Canned {
  address: number;
  row: (row: Buffer) => string;
}

/** A row of cells, each `size` bytes little-endian, padded to a whole row of 16 bytes' cells `width` wide. */
const cells =
  (size: 1 | 2, width: number, cell: (value: number) => string): Canned['row'] =>
  (row) => {
    let out = '';
    for (let i = 0; i < row.length; i += size) out += cell(size === 1 ? row[i]! : row[i]! + (row[i + 1] ?? 0) * 256).padStart(width);
    return out.padEnd((16 / size) * width);
  };

/** bb_dump's formats for hexdump's letters, as busybox 1.35 prints them. */
const canned: Record<string, Canned> = {
  b: { address: 7, row: cells(1, 4, (b) => b.toString(8).padStart(3, '0')) },
  c: { address: 7, row: cells(1, 4, (b) => escapes[b] ?? (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : b.toString(8).padStart(3, '0'))) },
  d: { address: 7, row: cells(2, 8, (w) => String(w).padStart(5, '0')) },
  o: { address: 7, row: cells(2, 8, (w) => w.toString(8).padStart(6, '0')) },
  x: { address: 7, row: cells(2, 8, (w) => hex(w, 4)) },
  C: {
    address: 8,
    row: (row) => {
      const bytes = [...row].map((b) => hex(b, 2));
      return `  ${bytes.slice(0, 8).join(' ').padEnd(23)}  ${bytes.slice(8).join(' ').padEnd(23)}  |${[...row].map(printable).join('')}|`;
    },
  },
  // No letter: 2-byte words in hex, each followed by a space.
  '': {
    address: 7,
    row: (row) => {
      const words: string[] = [];
      for (let i = 0; i < row.length; i += 2) words.push(hex((row[i + 1] ?? 0) * 256 + row[i]!, 4));
      return ` ${words.join(' ').padEnd(39)}`;
    },
  },
};

/**
 * busybox 1.35's hexdump over bb_dump: the canned formats `-b -c -d -o -x -C` (each a line of its
 * own per row, in the order given; none: 2-byte hex words), `-n LEN`, `-s OFS`, `-v`, its operands
 * one stream. `-e` and `-f` (bb_dump's format language) are not simulated: they say so.
 */
export function hexdumpCommand(read: ReadInput): Command {
  return {
    name: 'hexdump',
    async execute(args, ctx) {
      const help = helpAsked(args, hexdumpUsage);
      if (help) return help;
      const formats: Canned[] = [];
      let verbose = false;
      const parsed = getopt(
        'hexdump',
        hexdumpUsage,
        args,
        'bcdoxCv',
        'efns',
        {},
        {
          onOption: (letter) => {
            if (letter === 'v') verbose = true;
            else if (Object.hasOwn(canned, letter)) formats.push(canned[letter]!);
            else if (letter === 'e' || letter === 'f')
              return { stdout: '', stderr: `hexdump: -${letter}: bb_dump's format strings are not simulated by the Reflex simulator\n`, exitCode: 1 };
            return undefined;
          },
        },
      );
      if (isResult(parsed)) return parsed;
      const limits: Record<string, number> = { n: Infinity, s: 0 };
      for (const letter of ['n', 's']) {
        const text = parsed.opts.get(letter);
        if (typeof text !== 'string') continue;
        const n = number(text);
        if (n === undefined) return { stdout: '', stderr: `hexdump: invalid number '${text}'\n`, exitCode: 1 };
        limits[letter] = n;
      }
      if (formats.length === 0) formats.push(canned['']!);
      let stderr = '';
      const chunks: Buffer[] = [];
      for (const f of parsed.operands.length ? parsed.operands : [undefined]) {
        const data = await read(ctx, 'hexdump', f);
        if (typeof data === 'string') stderr += data;
        else chunks.push(data);
      }
      // None opened: the messages alone, no last offset.
      if (chunks.length === 0) return { stdout: '', stderr, exitCode: 1 };
      const all = Buffer.concat(chunks);
      const skip = Math.min(limits.s!, all.length);
      const data = all.subarray(skip, skip + Math.min(limits.n!, all.length));
      let out = '';
      let previous: string | undefined;
      let starred = false;
      for (let at = 0; at < data.length; at += 16) {
        const row = data.subarray(at, at + 16);
        const key = row.toString('hex');
        // A row equal to the one before is one `*` (as hexdump does), unless -v.
        if (!verbose && key === previous && row.length === 16) {
          if (!starred) out += '*\n';
          starred = true;
          continue;
        }
        previous = key;
        starred = false;
        for (const format of formats) out += `${hex(skip + at, format.address)}${format.row(row)}\n`;
      }
      out += `${hex(skip + data.length, formats[0]!.address)}\n`;
      const o = new ProgramOutput();
      o.err(stderr);
      o.bytes(Buffer.from(out, 'latin1'));
      return o.result(stderr ? 1 : 0);
    },
  };
}

/** What `xxd -r` makes of a dump: with -p every pair of hex digits, else each line's hex after its `OFFSET:` up to the two spaces before its text. */
function reversed(text: string, plain: boolean): Buffer {
  const hexOf = (s: string): Buffer => {
    const digits = s.replace(/[^0-9a-fA-F]/g, '');
    return Buffer.from(digits.slice(0, digits.length - (digits.length % 2)), 'hex');
  };
  if (plain) return hexOf(text);
  const parts: Buffer[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*[0-9a-fA-F]+:\s?(.*)$/.exec(line);
    if (m) parts.push(hexOf(m[1]!.split('  ')[0]!));
  }
  return Buffer.concat(parts);
}

/** `xxd -i`: the bytes as a C array, `perLine` a line, named after the file (not alphanumeric: `_`; a leading digit: `__` before it); from stdin the lines alone. */
function included(data: Buffer, perLine: number, file: string | undefined): string {
  let lines = '';
  for (let at = 0; at < data.length; at += perLine) lines += `  ${[...data.subarray(at, at + perLine)].map((b) => `0x${hex(b, 2)},`).join(' ')}\n`;
  if (file === undefined || file === '-') return lines;
  const name = `${/^[0-9]/.test(file) ? '__' : ''}${file.replace(/[^A-Za-z0-9]/g, '_')}`;
  return `unsigned char ${name}[] = {\n${lines}};\nunsigned int ${name}_len = ${data.length};\n`;
}

/**
 * busybox 1.35's xxd (hexdump_xxd.c): `-g N` bytes a group, `-c N` a line, `-l`/`-n LEN`, `-s OFS`,
 * `-o OFS` added to the offsets shown, `-p` plain hex (30 a line), `-r` back to bytes (with `-p`,
 * any hex digits), `-i` a C array.
 */
export function xxdCommand(read: ReadInput): Command {
  return {
    name: 'xxd',
    async execute(args, ctx) {
      const help = helpAsked(args, xxdUsage);
      if (help) return help;
      const parsed = getopt('xxd', xxdUsage, args, 'pri', 'gclnso');
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      const plain = opts.has('p');
      const numbers: Record<string, number> = { g: 2, c: plain ? 30 : opts.has('i') ? 12 : 16, l: Infinity, s: 0, o: 0 };
      for (const [letter, text] of opts) {
        if (typeof text !== 'string') continue;
        const n = number(text);
        if (n === undefined) return { stdout: '', stderr: `xxd: invalid number '${text}'\n`, exitCode: 1 };
        numbers[letter === 'n' ? 'l' : letter] = n;
      }
      if (operands.length > 1) return { stdout: '', stderr: `${banner}${xxdUsage}`, exitCode: 1 };
      const input = await read(ctx, 'xxd', operands[0]);
      if (typeof input === 'string') return { stdout: '', stderr: input, exitCode: 1 };
      if (opts.has('r')) return bytesOutput(reversed(input.toString('latin1'), plain));
      const skip = Math.min(numbers.s!, input.length);
      const data = input.subarray(skip, skip + Math.min(numbers.l!, input.length));
      const perLine = numbers.c! || 16;
      const group = numbers.g! || perLine;
      let out = '';
      if (opts.has('i')) return bytesOutput(Buffer.from(included(data, perLine, operands[0]), 'latin1'));
      for (let at = 0; at < data.length; at += perLine) {
        const row = data.subarray(at, at + perLine);
        if (plain) {
          out += `${row.toString('hex')}\n`;
          continue;
        }
        const groups: string[] = [];
        for (let i = 0; i < row.length; i += group) groups.push(row.subarray(i, i + group).toString('hex'));
        const width = perLine * 2 + Math.ceil(perLine / group) - 1;
        out += `${hex(skip + at + numbers.o!, 8)}: ${groups.join(' ').padEnd(width)}  ${[...row].map(printable).join('')}\n`;
      }
      return bytesOutput(Buffer.from(out, 'latin1'));
    },
  };
}
