import { posix } from 'node:path';
import { parsePatch, type StructuredPatch } from 'diff';
import type { Command, ExecResult } from 'just-bash';
import { newEntryMode } from './guest-fs.js';
import { umaskOf, type ProgramHost } from './program-host.js';

const devNull = '/dev/null';

/** A patch's file name as busybox takes it: `-p N` strips N leading parts; without `-p`, all but the last. */
function stripped(name: string, strip: number | undefined): string {
  if (strip === undefined) return posix.basename(name);
  return name.split('/').slice(strip).join('/');
}

/** A hunk header's start as written (the diff library counts `-0,0` as starting at 1). */
const headerStart = (start: number, lines: number): number => (lines === 0 ? start - 1 : start);

/** A hunk header's `start + length` as written. */
const headerSum = (start: number, lines: number): number => headerStart(start, lines) + lines;

/** The file being patched, read a line at a time from where the last hunk left it (busybox reads it in one pass). */
interface FileReader {
  text: string;
  at: number;
  /** Lines read so far, the end of the file counting as one (busybox's `linenum`). */
  line: number;
}

function readLine(file: FileReader): string | undefined {
  file.line++;
  if (file.at >= file.text.length) return undefined;
  const end = file.text.indexOf('\n', file.at);
  const line = file.text.slice(file.at, end < 0 ? file.text.length : end);
  file.at = end < 0 ? file.text.length : end + 1;
  return line;
}

/**
 * busybox's `apply_one_hunk`, line for line: the hunk is found by its content from where the last
 * one ended (never by its line numbers), the lines before it are written out as they are, and the
 * matched ones are replaced. A line the hunk adds, met where it would be added, marks the hunk
 * "possibly reversed" (said when it then fails); with -N that turns the match around, so a hunk
 * already applied is left as it is. The result: what to write for the part read, or the failure
 * (with the line busybox names when it warns of a reversed hunk, 0 when it does not).
 */
function applyHunk(
  lines: string[],
  file: FileReader,
  opts: { reverse: boolean; forward: boolean; context: number; resultLength: number },
): { written: string } | { possiblyReversedAt: number } {
  let reverse = opts.reverse ? 1 : 0;
  let backwarn = 0;
  let dummyRevert = 0;
  let trailing = 0;
  for (const l of lines) trailing = l[0] === ' ' ? trailing + 1 : 0;
  const matchEof = !trailing || trailing < opts.context;
  let written = '';
  let p = 0;
  const buf: string[] = [];
  const adds = (): string => '+-'[reverse]!;
  if (opts.resultLength)
    for (;;) {
      const data = readLine(file);
      while (p < lines.length && lines[p]![0] === adds()) {
        if (data !== undefined && data === lines[p]!.slice(1) && !backwarn) {
          backwarn = file.line;
          if (opts.forward) {
            dummyRevert = 1;
            reverse ^= 1;
            continue;
          }
        }
        p++;
      }
      if (data === undefined) {
        if (p >= lines.length && matchEof) break;
        return { possiblyReversedAt: backwarn ? file.line : 0 };
      }
      buf.push(data);
      let check = buf.length - 1;
      for (;;) {
        while (p < lines.length && lines[p]![0] === adds()) {
          if (buf[check] === lines[p]!.slice(1) && !backwarn) {
            backwarn = file.line;
            if (opts.forward) {
              dummyRevert = 1;
              reverse ^= 1;
            }
          }
          p++;
        }
        if (p >= lines.length || buf[check] !== lines[p]!.slice(1)) {
          // No match here: the first line read is written as it is, and the rest is tried again.
          written += `${buf.shift()}\n`;
          p = 0;
          if (buf.length === 0) break;
          check = 0;
        } else {
          p++;
          if (p >= lines.length && !matchEof) return { written: written + emitted(lines, reverse ^ dummyRevert) };
          check++;
          if (check === buf.length) break;
        }
      }
    }
  return { written: written + emitted(lines, reverse ^ dummyRevert) };
}

/** The hunk's lines as they stand once applied (`reverse`: backwards): all but those it removes. */
function emitted(lines: string[], reverse: number): string {
  const removed = '-+'[reverse];
  return lines
    .filter((l) => l[0] !== removed)
    .map((l) => `${l.slice(1)}\n`)
    .join('');
}

/**
 * busybox's `patch` (the `diff` library parses, {@link applyHunk} fits the hunks as busybox
 * does): each file's hunks are fitted in turn; the first that does not fit is printed to stderr
 * (`Possibly reversed hunk N at L` when it looked applied already, `Hunk N FAILED OLD/NEW.` and
 * its lines as the patch has them), the file is left as it was and the exit code is 1. `-p N`,
 * `-i FILE`, `-R`, `-N` (a hunk that looks applied is left alone), `-E`, `--dry-run`, an ORIGFILE
 * to patch instead of the named one, `/dev/null` to create or remove a file.
 */
export function busyboxPatch(host: ProgramHost): Command {
  return {
    name: 'patch',
    async execute(args, ctx): Promise<ExecResult> {
      let strip: number | undefined;
      let input: string | undefined;
      let reverse = false;
      let forward = false;
      let removeEmpty = false;
      let dryRun = false;
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '--dry-run') dryRun = true;
        else if (a === '--forward') forward = true;
        else if (a === '-p' || a === '-i') {
          const value = args[++i] ?? '';
          if (a === '-p') strip = Number(value);
          else input = value;
        } else if (/^-p\d+$/.test(a)) strip = Number(a.slice(2));
        else if (a.startsWith('-i') && a.length > 2) input = a.slice(2);
        else if (a.startsWith('-') && a.length > 1) {
          for (const c of a.slice(1)) {
            if (c === 'R') reverse = true;
            else if (c === 'N') forward = true;
            else if (c === 'E') removeEmpty = true;
          }
        } else operands.push(a);
      }
      const [origFile, patchFile] = operands;
      const source = patchFile ?? input;
      let text: string;
      if (source === undefined || source === '-') text = String(ctx.stdin);
      else {
        const path = posix.resolve(ctx.cwd, source);
        if ((await host.fs.entry(path))?.type !== 'file')
          return { stdout: '', stderr: `patch: can't open '${source}': No such file or directory\n`, exitCode: 1 };
        text = (await host.fs.read(path)).toString('utf8');
      }
      let patches: StructuredPatch[];
      try {
        patches = parsePatch(text).filter((p) => p.hunks.length > 0);
      } catch {
        return { stdout: '', stderr: '', exitCode: 0 };
      }
      let stdout = '';
      let stderr = '';
      let code = 0;
      for (const parsed of patches) {
        // As busybox decides (its patch.c): -R swaps the names but not the first hunk's line numbers; the
        // file is the new one (the old one with -R) unless that is /dev/null or the hunk leaves nothing,
        // which empties the other; the name is stripped after that test; an old file /dev/null or a
        // hunk from nothing (`-0,0`) creates it.
        const [oldName, newName] = reverse ? [parsed.newFileName, parsed.oldFileName] : [parsed.oldFileName, parsed.newFileName];
        const first = parsed.hunks[0]!;
        const oldSum = headerSum(first.oldStart, first.oldLines);
        const newSum = headerSum(first.newStart, first.newLines);
        let chosen = reverse ? oldName : newName;
        const empty = chosen === devNull || (reverse ? oldSum : newSum) === 0;
        if (empty) chosen = reverse ? newName : oldName;
        const name = origFile ?? stripped(chosen, strip);
        const target = posix.resolve(ctx.cwd, name);
        const entry = await host.fs.entry(target);
        // busybox dies on a file it cannot open: the patches after it are not read.
        const cannotOpen = (): ExecResult => ({ stdout, stderr: `${stderr}patch: can't open '${name}': No such file or directory\n`, exitCode: 1 });
        if (empty) {
          if (removeEmpty) {
            stdout += `removing ${name}\n`;
            if (entry && !dryRun) await host.fs.remove(target);
          } else {
            stdout += `patching file ${name}\n`;
            if (entry?.type !== 'file') return cannotOpen();
            if (!dryRun) await host.fs.write(target, new Uint8Array(), entry);
          }
          continue;
        }
        const creating = oldName === devNull || oldSum === 0;
        stdout += creating ? `creating ${name}\n` : `patching file ${name}\n`;
        let current = '';
        if (!creating) {
          if (entry?.type !== 'file') return cannotOpen();
          current = (await host.fs.read(target)).toString('utf8');
        }
        const file: FileReader = { text: current, at: 0, line: 0 };
        let patched = '';
        let failed = false;
        for (const [i, hunk] of parsed.hunks.entries()) {
          const lines = hunk.lines.filter((l) => !l.startsWith('\\'));
          const context = lines.findIndex((l) => l[0] !== ' ');
          const result = applyHunk(lines, file, {
            reverse,
            forward,
            context: context < 0 ? lines.length : context,
            resultLength: reverse ? hunk.oldLines : hunk.newLines,
          });
          if ('possiblyReversedAt' in result) {
            if (result.possiblyReversedAt) stderr += `Possibly reversed hunk ${i + 1} at ${result.possiblyReversedAt}\n`;
            stderr += `Hunk ${i + 1} FAILED ${headerStart(hunk.oldStart, hunk.oldLines)}/${headerStart(hunk.newStart, hunk.newLines)}.\n`;
            stderr += lines.map((l) => `${l}\n`).join('');
            failed = true;
            break;
          }
          patched += result.written;
        }
        if (failed) {
          code = 1;
          continue;
        }
        current = patched + file.text.slice(file.at);
        if (dryRun) continue;
        if (entry) await host.fs.remove(target);
        if (removeEmpty && current === '') continue;
        await host.fs.write(target, Buffer.from(current, 'utf8'), {
          uid: entry?.uid ?? host.uid,
          gid: entry?.gid ?? host.gid,
          mode: entry?.mode ?? newEntryMode(0o666, umaskOf(host)),
        });
      }
      return { stdout, stderr, exitCode: code };
    },
  };
}
