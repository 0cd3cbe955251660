import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { debTar, Died, extractEntry, makeLinks, openFile, type PendingLink, type TarItem } from './busybox-deb.js';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { after, checkDeps, fnmatch, packageOf, paragraphs, setStatus, statusText, StatusTable, word, type Package } from './busybox-dpkg-status.js';
import type { ProgramHost } from './program-host.js';

const dpkgUsageText =
  `Usage: dpkg [-ilCPru] [-F OPT] PACKAGE\n\nInstall, remove and manage Debian packages\n\n` +
  '\t-i,--install\tInstall the package\n\t-l,--list\tList of installed packages\n\t--configure\tConfigure an unpackaged package\n' +
  '\t-P,--purge\tPurge all files of a package\n\t-r,--remove\tRemove all but the configuration files for a package\n' +
  "\t--unpack\tUnpack a package, but don't configure it\n\t--force-depends\tIgnore dependency problems\n" +
  '\t--force-confnew\tOverwrite existing config files when installing\n\t--force-confold\tKeep old config files when installing\n';
const dpkgUsage = `${banner}${dpkgUsageText}`;

const info = '/var/lib/dpkg/info';
const statusFile = '/var/lib/dpkg/status';
const controlFiles = ['preinst', 'postinst', 'prerm', 'postrm', 'list', 'md5sums', 'shlibs', 'conffiles', 'config', 'templates'];
/** getopt_long's table, in busybox's order (which its "ambiguous" message follows). */
const longOptions: Record<string, string> = {
  configure: 'C',
  force: 'F',
  install: 'i',
  list: 'l',
  purge: 'P',
  remove: 'r',
  unpack: 'u',
  'force-depends': 'depends',
  'force-confnew': 'confnew',
  'force-confold': 'confold',
};

/** What one dpkg run writes: maintainer scripts' output goes out before dpkg's own, which stdio holds until exit. */
class Output {
  scripts = '';
  own = '';
  stderr = '';
}

/**
 * busybox's `dpkg` over /var/lib/dpkg/status and /var/lib/dpkg/info (neither made for it):
 * `-i`/`--unpack` a .deb (control files to info/, preinst, data with conffiles kept as
 * NAME.dpkg-new, the .list, postinst at configure), `-l [PATTERN]`, `-r`, `-P`, `--configure`,
 * `--force-depends` (`-F depends`), `--force-confnew`, `--force-confold`; maintainer scripts run
 * in the guest's shell without arguments, as busybox's system() runs them.
 */
export function dpkgProgram(host: ProgramHost): Command {
  const root = { uid: 0, gid: 0, mode: 0o644 };
  const exists = async (path: string): Promise<boolean> => (await host.fs.entry(path)) !== undefined;
  const text = async (path: string): Promise<string | undefined> =>
    (await exists(path)) ? (await host.fs.read(path)).toString('latin1') : undefined;
  const lines = async (path: string): Promise<string[]> => {
    const t = await text(path);
    return t === undefined ? [] : t.split('\n').filter((l, i, all) => i < all.length - 1 || l !== '');
  };

  async function runScript(ctx: CommandContext, out: Output, name: string, script: string): Promise<void> {
    const path = `${info}/${name}.${script}`;
    if (!(await exists(path))) return;
    const run = await ctx.exec!(`'${path}'`, { cwd: ctx.cwd, stdin: '' });
    out.scripts += run.stdout;
    out.stderr += run.stderr;
    // system()'s wait status, as busybox prints it.
    if (run.exitCode !== 0) throw new Died(`${script} failed, exit code ${run.exitCode * 256}`);
  }

  /** Busybox's is_builtin_exclude: directories it never removes. */
  const builtin = (name: string): boolean => {
    if (!name.startsWith('/')) return false;
    let rest = name.slice(1);
    if (['.', 'etc', 'opt', 'srv', 'var', 'var/lib'].includes(rest)) return true;
    if (rest.startsWith('usr/')) rest = rest.slice(4);
    if (rest.startsWith('local/')) rest = rest.slice(6);
    return ['bin', 'lib', 'lib32', 'lib64', 'sbin'].includes(rest);
  };

  /** One pass of remove_file_array: whether it removed anything. */
  async function removePass(names: string[], exclude: string[]): Promise<boolean> {
    let removed = false;
    for (const name of names) {
      if (builtin(name) || exclude.includes(name)) continue;
      const entry = await host.fs.entry(name);
      if (!entry) continue;
      if (entry.type === 'directory' && (await host.fs.list(name)).length > 0) continue;
      await host.fs.remove(name);
      removed = true;
    }
    return removed;
  }

  const infoFiles = (name: string): string[] => controlFiles.map((c) => `${info}/${name}.${c}`);

  async function remove(ctx: CommandContext, out: Output, p: Package, noisy: boolean): Promise<void> {
    if (noisy) out.own += `Removing ${p.name} (${p.version})...\n`;
    await runScript(ctx, out, p.name, 'prerm');
    const list = `${info}/${p.name}.list`;
    const conffiles = `${info}/${p.name}.conffiles`;
    const files = await lines(list);
    const keep = await lines(conffiles);
    while (await removePass(files, keep));
    await removePass(infoFiles(p.name), [conffiles, `${info}/${p.name}.postrm`]);
    if (await exists(conffiles)) {
      const data = await host.fs.read(conffiles);
      await host.fs.remove(conffiles);
      await host.fs.write(list, data, root);
    }
    setStatus(p, 'config-files', 2);
  }

  async function purge(ctx: CommandContext, out: Output, p: Package): Promise<void> {
    out.own += `Purging ${p.name} (${p.version})...\n`;
    await runScript(ctx, out, p.name, 'prerm');
    const files = await lines(`${info}/${p.name}.list`);
    while (await removePass(files, []));
    await removePass(infoFiles(p.name), [`${info}/${p.name}.postrm`]);
    await runScript(ctx, out, p.name, 'postrm');
    await removePass(infoFiles(p.name), []);
    setStatus(p, 'not-installed', 2);
  }

  /** busybox's name for an extracted entry: leading `/`, `./` and `../` dropped, under `prefix`. */
  const prefixed = (prefix: string, name: string): string | undefined => {
    let rest = name.replace(/\/$/, '').replace(/^\/+/, '');
    while (rest.startsWith('.')) {
      if (rest[1] === '.') rest = rest.slice(1);
      if (rest[1] !== '/') break;
      rest = rest.slice(2);
    }
    return rest === '' ? undefined : prefix + rest;
  };

  async function unpack(ctx: CommandContext, out: Output, p: Package, force: Set<string>): Promise<void> {
    const conffileList: string[] = [];
    const old = p.old;
    if (old && word(old.status, 2) === 'installed') {
      out.own += `Preparing to replace ${p.name} ${old.version} (using ${p.file})...\n`;
      if (!force.has('confold')) conffileList.push(...(await lines(`${info}/${p.name}.md5sums`)));
      await remove(ctx, out, old, false);
    } else out.own += `Unpacking ${p.name} (from ${p.file})...\n`;
    const deb = await openFile(host, ctx, p.file!);
    const links: PendingLink[] = [];
    for (const item of await debTar(deb, 'control', false)) {
      if (!controlFiles.some((c) => item.header.name === `./${c}`)) continue;
      const target = prefixed(`${info}/${p.name}.`, item.header.name)!;
      await extractEntry(host, target, target, item, { unlinkOld: true, links });
    }
    await makeLinks(host, ctx.cwd, links);
    await runScript(ctx, out, p.name, 'preinst');
    if (!force.has('confnew')) conffileList.push(...(await lines(`${info}/${p.name}.conffiles`)));
    const passed: string[] = [];
    for (const item of await debTar(deb, 'data')) {
      let name = item.header.name.replace(/\/$/, '');
      const path = name.slice(1);
      if (conffileList.includes(path) && item.header.type !== 'directory' && (await host.fs.entry(path))?.type === 'file') {
        const md5 = createHash('md5')
          .update(await host.fs.read(path))
          .digest('hex');
        if (!conffileList.includes(`${md5}  ${path}`)) {
          out.own += `Warning: Creating ${path} as ${path}.dpkg-new\n`;
          name = `${name}.dpkg-new`;
        }
      }
      const target = prefixed('/', name);
      if (target === undefined) continue;
      const entry: TarItem = { header: { ...item.header, name }, data: item.data };
      await extractEntry(host, posix.resolve('/', target), target, entry, { unlinkOld: true, links });
      passed.push(target.replace(/\.dpkg-new$/, ''));
    }
    await makeLinks(host, ctx.cwd, links);
    await host.fs.write(`${info}/${p.name}.list`, Buffer.from(passed.map((n) => `${n}\n`).join(''), 'latin1'), root);
    setStatus(p, 'install', 0);
    setStatus(p, 'unpacked', 2);
  }

  async function configure(ctx: CommandContext, out: Output, p: Package): Promise<void> {
    out.own += `Setting up ${p.name} (${p.version})...\n`;
    await runScript(ctx, out, p.name, 'postinst');
    setStatus(p, 'install', 0);
    setStatus(p, 'installed', 2);
  }

  /** Writes the new status file, the old one kept as status.udeb.bak. */
  async function writeStatus(old: string, table: StatusTable, debs: Package[]): Promise<void> {
    const out = statusText(old, table, debs);
    const current = await host.fs.read(statusFile);
    const bak = `${statusFile}.udeb.bak`;
    if (await exists(bak)) await host.fs.remove(bak);
    await host.fs.write(bak, current, root);
    await host.fs.remove(statusFile);
    await host.fs.write(statusFile, Buffer.from(out, 'latin1'), root);
  }

  return {
    name: 'dpkg',
    async execute(args, ctx): Promise<ExecResult> {
      const commands = new Set<string>();
      const force = new Set<string>();
      const usage = (): ExecResult => ({ stdout: '', stderr: dpkgUsage, exitCode: 1 });
      const p = getopt('dpkg', dpkgUsageText, args, 'CilPru', 'F', longOptions, {
        abbreviations: true,
        onOption: (c, v) => {
          if (c === 'F' && typeof v === 'string') {
            if (!['depends', 'confnew', 'confold'].includes(v)) return usage();
            force.add(v);
          } else if (c.length > 1) force.add(c);
          else commands.add(c);
          return undefined;
        },
      });
      if (isResult(p)) return p;
      const operands = p.operands;
      if (commands.size !== 1) return usage();
      const command = [...commands][0]!;
      const out = new Output();
      try {
        const statusEntry = await host.fs.entry(statusFile);
        if (!statusEntry) throw new Died(`can't open '${statusFile}': No such file or directory`);
        const old = statusEntry.type === 'file' ? await text(statusFile) : '';
        const table = new StatusTable();
        const packages: Package[] = [];
        for (const chunk of paragraphs(old ?? '')) {
          const p = packageOf(chunk);
          if (!p) continue;
          p.status = after(chunk, 'Status:') ?? '';
          packages.push(p);
          table.set(p);
        }
        if (command === 'l') {
          out.own += '    Name           Version\n+++-==============-==============\n';
          for (const p of table.inOrder()) {
            if (operands[0] !== undefined && !fnmatch(operands[0], p.name)) continue;
            const s2 = word(p.status, 2)[0] ?? '\0';
            out.own += `${p.status.startsWith('i') ? 'i' : 'r'}${s2}  ${p.name.padEnd(14)} ${p.version}\n`;
          }
          return { stdout: out.own, stderr: '', exitCode: 0 };
        }
        const debs: Package[] = [];
        for (const operand of operands) {
          if (command === 'i' || command === 'u') {
            const control = (await debTar(await openFile(host, ctx, operand), 'control', false)).find((e) => e.header.name === './control');
            if (!control) throw new Died("can't extract control file");
            const p = packageOf(control.data.toString('latin1'));
            if (!p) {
              out.stderr += `dpkg: invalid control file in ${operand}\n`;
              continue;
            }
            p.control = control.data.toString('latin1');
            p.file = operand;
            const known = table.get(p.name);
            if (!known || known.status === '') p.status = 'install reinstreq not-installed';
            else {
              p.status = known.status;
              setStatus(p, 'install', 0);
              setStatus(p, 'reinstreq', 1);
            }
            packages.push(p);
            debs.push(p);
            table.set(p);
            p.old = known;
          } else {
            const p = packages.find((q) => q.name === operand);
            if (!p) throw new Died(`package ${operand} is uninstalled or unknown`);
            const state = word(table.get(p.name)?.status ?? '', 2);
            const current = table.get(p.name) ?? p;
            if (command === 'r') {
              if (state === 'not-installed' || state === 'config-files') throw new Died(`${p.name} is already removed`);
              setStatus(current, 'deinstall', 0);
            } else if (command === 'P') {
              if (state === 'not-installed') throw new Died(`${p.name} is already purged`);
              setStatus(current, 'purge', 0);
            }
            debs.push(current);
          }
        }
        if (debs.length === 0) throw new Died('no package files specified');
        if (!force.has('depends')) checkDeps(table, packages, debs);
        for (const p of debs) {
          if (command === 'r') await remove(ctx, out, p, true);
          else if (command === 'P') await purge(ctx, out, p);
          else if (command === 'i' || command === 'u') await unpack(ctx, out, p, force);
          else await configure(ctx, out, p);
        }
        if (command === 'i') for (const p of debs) await configure(ctx, out, p);
        // Only a .deb carries a control paragraph to write: the others' status lines stand alone, as busybox writes them.
        await writeStatus(old ?? '', table, command === 'i' || command === 'u' ? debs : debs.map((d) => ({ ...d, control: undefined })));
        return { stdout: out.scripts + out.own, stderr: out.stderr, exitCode: 0 };
      } catch (err) {
        if (!(err instanceof Died)) throw err;
        return { stdout: out.scripts + out.own, stderr: `${out.stderr}dpkg: ${err.message}\n`, exitCode: 1 };
      }
    },
  };
}
