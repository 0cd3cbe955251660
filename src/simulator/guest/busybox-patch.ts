import { posix } from 'node:path';
import { applyPatch, parsePatch, reversePatch, type StructuredPatch } from 'diff';
import type { Command, ExecResult } from 'just-bash';
import type { ProgramHost } from './program-host.js';

const devNull = '/dev/null';

/** A patch's file name as busybox takes it: `-p N` strips N leading parts; without `-p`, all but the last. */
function stripped(name: string, strip: number | undefined): string {
  if (strip === undefined) return posix.basename(name);
  return name.split('/').slice(strip).join('/');
}

/** A hunk header's `start + length` as written (the diff library counts `-0,0` as starting at 1). */
const headerSum = (start: number, lines: number): number => (lines === 0 ? start - 1 : start + lines);

/**
 * busybox's `patch` (the `diff` library parses and fits the hunks): each file's hunks are fitted in
 * turn; the first that does not fit is printed to stderr (`Hunk N FAILED OLD/NEW.` and its lines),
 * the file is left as it was and the exit code is 1. `-p N`, `-i FILE`, `-R`, `-E`, `--dry-run`, an
 * ORIGFILE to patch instead of the named one, `/dev/null` to create or remove a file.
 */
export function busyboxPatch(host: ProgramHost): Command {
  return {
    name: 'patch',
    async execute(args, ctx): Promise<ExecResult> {
      let strip: number | undefined;
      let input: string | undefined;
      let reverse = false;
      let removeEmpty = false;
      let dryRun = false;
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '--dry-run') dryRun = true;
        else if (a === '-p' || a === '-i') {
          const value = args[++i] ?? '';
          if (a === '-p') strip = Number(value);
          else input = value;
        } else if (/^-p\d+$/.test(a)) strip = Number(a.slice(2));
        else if (a.startsWith('-i') && a.length > 2) input = a.slice(2);
        else if (a.startsWith('-') && a.length > 1) {
          for (const c of a.slice(1)) {
            if (c === 'R') reverse = true;
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
        const p = reverse ? reversePatch(parsed) : parsed;
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
        let failed = false;
        for (const [i, hunk] of p.hunks.entries()) {
          const next = applyPatch(current, { ...p, hunks: [hunk] });
          if (next === false) {
            stderr += `Hunk ${i + 1} FAILED ${hunk.oldStart}/${hunk.newStart}.\n${hunk.lines.map((l) => `${l}\n`).join('')}`;
            failed = true;
            break;
          }
          current = next;
        }
        if (failed) {
          code = 1;
          continue;
        }
        if (dryRun) continue;
        if (entry) await host.fs.remove(target);
        if (removeEmpty && current === '') continue;
        await host.fs.write(target, Buffer.from(current, 'utf8'), {
          uid: entry?.uid ?? host.uid,
          gid: entry?.gid ?? host.gid,
          mode: entry?.mode ?? 0o644,
        });
      }
      return { stdout, stderr, exitCode: code };
    },
  };
}
