import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { debTar, Died, extractEntry, makeLinks, openFile, verboseLine, type PendingLink } from './busybox-deb.js';
import { dpkgProgram } from './busybox-dpkg.js';
import { banner } from './busybox-getopt.js';
import { rpmPrograms } from './busybox-rpm.js';
import type { ProgramHost } from './program-host.js';
import { zoneOf } from './guest-zone.js';

const dpkgDebUsage =
  `${banner}Usage: dpkg-deb [-cefxX] FILE [DIR]\n\nPerform actions on Debian packages (.deb)\n\n` +
  '\t-c\tList files\n\t-f\tPrint control fields\n\t-e\tExtract control files to DIR (default: ./DEBIAN)\n' +
  '\t-x\tExtract files to DIR (no default)\n\t-X\tVerbose extract\n';

const usage = (): ExecResult => ({ stdout: '', stderr: dpkgDebUsage, exitCode: 1 });

/**
 * busybox's `dpkg-deb`: `-c` lists the data files, `-f` prints the control file, `-e` extracts the
 * control files (to ./DEBIAN by default), `-x` the data files (`-X`: naming each) into DIR; one
 * action, the package (`-` for stdin) and at most a directory.
 */
function dpkgDebProgram(host: ProgramHost): Command {
  return {
    name: 'dpkg-deb',
    async execute(args, ctx) {
      const actions = new Set<string>();
      const operands: string[] = [];
      for (const [i, a] of args.entries()) {
        if (a === '--') {
          operands.push(...args.slice(i + 1));
          break;
        }
        if (a.startsWith('--')) return { stdout: '', stderr: `dpkg-deb: unrecognized option '${a}'\n${dpkgDebUsage}`, exitCode: 1 };
        if (a.startsWith('-') && a.length > 1) {
          for (const c of a.slice(1)) {
            if (!'cefXx'.includes(c)) return { stdout: '', stderr: `dpkg-deb: invalid option -- '${c}'\n${dpkgDebUsage}`, exitCode: 1 };
            actions.add(c);
          }
        } else operands.push(a);
      }
      const [file, dirOperand] = operands;
      if (file === undefined || operands.length > 2 || actions.size !== 1) return usage();
      const action = [...actions][0]!;
      if ((action === 'c' || action === 'f') && dirOperand !== undefined) return usage();
      if ((action === 'x' || action === 'X') && dirOperand === undefined) return usage();
      let stdout = '';
      try {
        const deb = await openFile(host, ctx, file, true);
        let dir = ctx.cwd;
        const extractTo = action === 'e' ? (dirOperand ?? './DEBIAN') : dirOperand;
        if (extractTo !== undefined) {
          dir = posix.resolve(ctx.cwd, extractTo);
          if (!(await host.fs.entry(dir)) && (await host.fs.entry(posix.dirname(dir)))?.type === 'directory')
            await host.fs.mkdir(dir, { uid: host.uid, gid: host.gid, mode: 0o755 });
          const made = await host.fs.entry(dir);
          if (made?.type !== 'directory')
            throw new Died(`can't change directory to '${extractTo}': ${made ? 'Not a directory' : 'No such file or directory'}`);
        }
        const items = await debTar(deb, action === 'e' || action === 'f' ? 'control' : 'data');
        if (action === 'c') return { stdout: items.map((item) => verboseLine(item, zoneOf(ctx))).join(''), stderr: '', exitCode: 0 };
        if (action === 'f') {
          const control = items.find((i) => i.header.name === './control');
          return { stdout: control ? control.data.toString('latin1') : '', stderr: '', exitCode: 0 };
        }
        const links: PendingLink[] = [];
        for (const item of items) {
          if (action === 'X') stdout += `${item.header.name}\n`;
          await extractEntry(host, posix.resolve(dir, item.header.name), item.header.name.replace(/\/$/, ''), item, { links });
        }
        await makeLinks(host, dir, links);
        return { stdout, stderr: '', exitCode: 0 };
      } catch (err) {
        if (!(err instanceof Died)) throw err;
        return { stdout, stderr: `dpkg-deb: ${err.message}\n`, exitCode: 1 };
      }
    },
  };
}

/**
 * busybox's package programs: `dpkg-deb`, `dpkg` (its status in /var/lib/dpkg, maintainer scripts
 * run in the guest), `rpm` and `rpm2cpio`. Their output, messages and exit codes are busybox 1.35's
 * on the LXD 5.0.2 test bed.
 */
export function busyboxPackages(host: ProgramHost): Command[] {
  return [dpkgDebProgram(host), dpkgProgram(host), ...rpmPrograms(host)];
}
