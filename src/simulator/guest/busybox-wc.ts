import type { CommandContext, ExecResult } from 'just-bash';
import { isDirectory, openFailure } from './busybox-reads.js';
import { stdinBytes } from './program-host.js';
import { ProgramOutput } from './program-output.js';

/** busybox's counts in the order it prints them: lines, words, characters, bytes, longest line. */
const order = ['l', 'w', 'm', 'c', 'L'] as const;

/**
 * What busybox's wc (coreutils/wc.c) counts in `data`: newlines; words, runs of printable non-space
 * ASCII that a space or a control among \t\n\v\f\r ends (other bytes neither start nor end one);
 * characters, its bytes that do not continue a UTF-8 sequence (busybox's Unicode count, on in the
 * guest: `é` one, a stray `\377` one too); bytes; the longest line's width, a tab to the next
 * multiple of 8.
 */
function counts(data: Buffer): Record<(typeof order)[number], number> {
  let lines = 0;
  let words = 0;
  let chars = 0;
  let longest = 0;
  let at = 0;
  let inWord = false;
  for (const c of data) {
    if ((c & 0xc0) !== 0x80) chars++;
    if (c > 0x20 && c < 0x7f) {
      at++;
      inWord = true;
      continue;
    }
    if (c === 0x20) at++;
    else if (c === 9) at = (at | 7) + 1;
    else if (c >= 10 && c <= 13) {
      longest = Math.max(longest, at);
      if (c === 10) lines++;
      if (c !== 11) at = 0;
    } else continue;
    if (inWord) words++;
    inWord = false;
  }
  longest = Math.max(longest, at);
  if (inWord) words++;
  return { l: lines, w: words, m: chars, c: data.length, L: longest };
}

/**
 * busybox's wc counting itself, for `-L` (the longest line), which just-bash's wc lacks: the
 * counts asked for in busybox's order, padded to 9 unless one count of one input, `total` (the
 * longest of the longest lines) after more than one file; a file it cannot open said and skipped,
 * a directory said (`Is a directory`) and counted as empty.
 */
/** The counts wc's options ask for, in busybox's order (lines, words and bytes when none is asked). */
export function wcShown(args: string[]): (typeof order)[number][] {
  const types = new Set(args.filter((a) => /^-[lwcmL]+$/.test(a)).flatMap((a) => [...a.slice(1)]));
  return order.filter((t) => (types.size ? types.has(t) : t === 'l' || t === 'w' || t === 'c'));
}

export async function wcCounting(args: string[], ctx: CommandContext): Promise<ExecResult> {
  const shown = wcShown(args);
  const files = args.filter((a) => !a.startsWith('-') || a === '-');
  const inputs = files.length ? files : ['-'];
  const pad = !(shown.length === 1 && inputs.length === 1);
  const line = (n: Record<string, number>, name: string | undefined): string =>
    `${shown.map((t) => (pad ? String(n[t]).padStart(9) : String(n[t]))).join(' ')}${name === undefined ? '' : ` ${name}`}\n`;
  const total: Record<string, number> = { l: 0, w: 0, m: 0, c: 0, L: 0 };
  const o = new ProgramOutput();
  for (const f of inputs) {
    let data: Buffer = Buffer.alloc(0);
    if (f === '-') data = stdinBytes(ctx);
    else {
      const why = await openFailure(ctx.fs, ctx.cwd, f);
      if (why) {
        o.err(`wc: ${f}: ${why}\n`);
        continue;
      }
      if (await isDirectory(ctx.fs, ctx.cwd, f)) o.err(`wc: ${f}: Is a directory\n`);
      else data = Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, f)));
    }
    const n = counts(data);
    for (const t of order) total[t] = t === 'L' ? Math.max(total[t]!, n[t]) : total[t]! + n[t];
    o.out(line(n, files.length ? f : undefined));
  }
  if (inputs.length > 1) o.out(line(total, 'total'));
  return o.result(o.stderr ? 1 : 0);
}
