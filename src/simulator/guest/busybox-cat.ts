import type { Command, CommandContext } from 'just-bash';
import { getopt, isResult } from './busybox-getopt.js';
import { catCommand } from './guest-commands.js';
import { isDirectory, readOperand } from './busybox-reads.js';
import { ProgramOutput } from './program-output.js';

const catUsage =
  'Usage: cat [-nbvteA] [FILE]...\n\nPrint FILEs to stdout\n\n\t-n\tNumber output lines\n\t-b\tNumber nonempty lines\n' +
  '\t-v\tShow nonprinting characters as ^x or M-x\n\t-t\t...and tabs as ^I\n\t-e\t...and end lines with $\n\t-A\tSame as -vte\n';

/** libbb's visible(): a byte as `cat -v` shows it (`M-` past ASCII, `^X` for a control), a tab raw unless -t, `$` before a newline under -e. */
function visible(c: number, tabs: boolean, ends: boolean): string {
  if (c === 9 && !tabs) return '\t';
  if (c === 10) return ends ? '$\n' : '\n';
  let out = '';
  if (c >= 128) {
    c -= 128;
    out = 'M-';
  }
  if (c < 32 || c === 127) {
    out += '^';
    c ^= 0x40;
  }
  return out + String.fromCharCode(c);
}

/**
 * `cat` as busybox 1.35's (coreutils/cat.c): without options (or with `-u` only) the guest's plain
 * cat (guest-commands.ts), but over a directory bb_cat's `read error: Is a directory` for it; with `-v`, `-t`, `-e` or `-A` its catv, each byte through visible()
 * (`-n`/`-b` there number as `%6u` and two spaces), a file it cannot open `can't open 'F': why` and
 * a directory a failed read (status 1, no message); with `-n` or `-b` alone nl's numbering (`%6u`
 * and a tab, the count going on across files, every line ended), a file it cannot open `cat: F: why`
 * and a directory read as empty. Each message comes where the program reaches its operand.
 */
export function busyboxCat(): Command {
  const plain = catCommand();
  return {
    name: 'cat',
    async execute(args, ctx) {
      if (!ctx.origCommand) return plain.execute(args, ctx);
      const parsed = getopt('cat', catUsage, args, 'etvAnbu', '', {});
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      const has = (l: string): boolean => opts.has(l);
      const files = operands.length ? operands : ['-'];
      const o = new ProgramOutput();
      let failed = false;
      if (!['e', 't', 'v', 'A', 'n', 'b'].some(has)) {
        const directories = await Promise.all(files.map((f) => f !== '-' && isDirectory(ctx.fs, ctx.cwd, f)));
        if (!directories.some(Boolean)) return plain.execute(args, ctx);
        // bb_cat: a directory opens and its read fails (`read error: Is a directory`), the next file read.
        for (const f of files) {
          const data = await readOperand(ctx, f);
          if ('error' in data) o.err(`cat: can't open '${f}': ${data.error}\n`);
          else if ('directory' in data) o.err('cat: read error: Is a directory\n');
          else o.bytes(data);
          failed ||= !Buffer.isBuffer(data);
        }
        return o.result(failed ? 1 : 0);
      }
      const numbered = has('n') || has('b');
      if (['e', 't', 'v', 'A'].some(has)) {
        const tabs = has('t') || has('A');
        const ends = has('e') || has('A');
        let eolSeen = numbered;
        let lineno = 0;
        for (const f of files) {
          const data = await readOperand(ctx, f);
          if ('error' in data) {
            o.err(`cat: can't open '${f}': ${data.error}\n`);
            failed = true;
            continue;
          }
          if ('directory' in data) {
            failed = true;
            continue;
          }
          let text = '';
          for (const c of data) {
            // catv.c: a number before each byte after a newline (-b: not before an empty line's newline).
            if (eolSeen && !(has('b') && c === 10)) text += `${String(++lineno).padStart(6)}  `;
            eolSeen = numbered && c === 10;
            text += visible(c, tabs, ends);
          }
          o.out(text);
        }
        return o.result(failed ? 1 : 0);
      }
      let n = 1;
      for (const f of files) {
        const data = await readOperand(ctx, f);
        if ('error' in data) {
          o.err(`cat: ${f}: ${data.error}\n`);
          failed = true;
          continue;
        }
        if ('directory' in data) continue;
        const lines = data.toString('latin1').split('\n');
        if (lines.at(-1) === '') lines.pop();
        let text = '';
        for (const line of lines) {
          if (!has('b') || line !== '') text += `${String(n++).padStart(6)}\t`;
          text += `${line}\n`;
        }
        o.bytes(Buffer.from(text, 'latin1'));
      }
      return o.result(failed ? 1 : 0);
    },
  };
}
