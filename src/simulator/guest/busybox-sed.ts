import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { say } from './busybox-file-calls.js';
import { banner } from './busybox-getopt.js';
import { isDirectory, openFailure } from './busybox-reads.js';
import { lastIsNul, noEol, SedCycles, SedLimit, type Next, type SedInput, type Sink } from './busybox-sed-cycle.js';
import { SedDie, SedScript, type SedWFile } from './busybox-sed-script.js';
import { stdinBytes, type ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';
import type { StdinLeft } from './terminal-stdin.js';

const usage =
  'Usage: sed [-i[SFX]] [-nrE] [-f FILE]... [-e CMD]... [FILE]...\nor: sed [-i[SFX]] [-nrE] CMD [FILE]...\n\n' +
  '\t-e CMD\tAdd CMD to sed commands to be executed\n\t-f FILE\tAdd FILE contents to sed commands to be executed\n' +
  '\t-i[SFX]\tEdit files in-place (otherwise write to stdout)\n\t\tOptionally back files up, appending SFX\n' +
  '\t-n\tSuppress automatic printing of pattern space\n\t-r,-E\tUse extended regex syntax\n\n' +
  'If no -e or -f, the first non-option argument is the sed command string.\nRemaining arguments are input files (stdin if none).\n';

/** sed's command line as getopt32long reads `i::rEne:*f:*` and its long options (GNU getopt: operands and options mixed). */
interface SedLine {
  /** -i's suffix ('' with none); undefined without -i. */
  inPlace?: string;
  extended: boolean;
  quiet: number;
  /** -e scripts and -f files, each in its own order (busybox reads all the -e first). */
  scripts: string[];
  files: string[];
  operands: string[];
}

const longOptions = ['in-place', 'regexp-extended', 'quiet', 'silent', 'expression', 'file'] as const;

/** The command line, or getopt's refusal (its message, then the usage). */
function sedLine(args: string[]): SedLine | string {
  const line: SedLine = { extended: false, quiet: 0, scripts: [], files: [], operands: [] };
  const refuse = (message: string): string => `sed: ${message}\n${banner}${usage}`;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--') {
      line.operands.push(...args.slice(k + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      line.operands.push(a);
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const found = longOptions.filter((o) => o === name || o.startsWith(name));
      const option = found.includes(name as (typeof longOptions)[number]) ? name : found.length === 1 ? found[0]! : undefined;
      if (!option) return refuse(`unrecognized option '${a}'`);
      const value = eq < 0 ? undefined : a.slice(eq + 1);
      if (option === 'expression' || option === 'file') {
        const v = value ?? args[++k];
        if (v === undefined) return refuse(`option '--${option}' requires an argument`);
        (option === 'file' ? line.files : line.scripts).push(v);
      } else if (option === 'in-place') line.inPlace = value ?? '';
      else if (value !== undefined) return refuse(`option '--${option}' doesn't allow an argument`);
      else if (option === 'regexp-extended') line.extended = true;
      else line.quiet++;
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (c === 'i') {
        line.inPlace = a.slice(j + 1);
        break;
      }
      if (c === 'e' || c === 'f') {
        const v = j + 1 < a.length ? a.slice(j + 1) : args[++k];
        if (v === undefined) return refuse(`option requires an argument -- '${c}'`);
        (c === 'f' ? line.files : line.scripts).push(v);
        break;
      }
      if (c === 'r' || c === 'E') line.extended = true;
      else if (c === 'n') line.quiet++;
      else return refuse(`invalid option -- '${c}'`);
    }
  }
  return line;
}

/** Bytes as sed reads them: one character each. */
const latin1 = (text: string): string => Buffer.from(text).toString('latin1');
/** A name sed read from its script, as the filesystem is given it. */
const fsName = (name: string): string => Buffer.from(name, 'latin1').toString();

/** An open input: its bytes and how far they are read. */
interface Stream {
  data: string;
  pos: number;
}

/**
 * busybox 1.35's `sed` (editors/sed.c), ported: its command line and files here, its script language
 * (busybox-sed-script.ts), its cycle (busybox-sed-cycle.ts), its regular expressions as glibc's
 * regcomp reads them (posix-regex.ts). The files
 * are one stream, read a line ahead for `$`; one that does not open is said (`sed: F: why`) when
 * the read-ahead reaches it, and a directory reads as empty. A `-` operand runs the files up to it
 * then and there, so line numbers and `$` start again after it, and a `q` there leaves the rest of
 * that stream to the next run. With -i each file is written anew and renamed over its name (that
 * name alone changes: it stops being a link of the others). A branch loop that reads no line is
 * stopped after just-bash's sed limit (maxSedIterations, 100,000 jumps), with status 126.
 */
export function sedCommand(host: ProgramHost): Command {
  return {
    name: 'sed',
    async execute(args, ctx) {
      if (args[0] === '--version') return { stdout: 'This is not GNU sed version 4.0\n', stderr: '', exitCode: 0 };
      const line = sedLine(args);
      if (typeof line === 'string') return { stdout: '', stderr: line, exitCode: 1 };
      return new SedRun(host, ctx, line).run();
    },
  };
}

/** One run of sed: its command line, inputs, outputs and `w` files (sed_main and get_next_line's files). */
class SedRun implements SedInput {
  private readonly o = new ProgramOutput();
  private pending = '';
  private readonly wFiles = new Map<string, SedWFile>();
  private script!: SedScript;
  private inputs: string[] = [];
  private currentInput = 0;
  private lastInput = 0;
  private current?: Stream;
  /** Its stdin, taken when first read (a file operand leaves it unread: on a terminal, not waited for). */
  private stdinStream?: Stream;
  private cycles!: SedCycles;
  private exitCode = 0;
  private sink: Sink;
  private readonly limit: number;

  constructor(
    private readonly host: ProgramHost,
    private readonly ctx: CommandContext,
    private readonly line: SedLine,
  ) {
    this.sink = { write: (text) => (this.pending += text) };
    this.limit = ctx.limits?.maxSedIterations ?? 100_000;
  }

  private abs(name: string): string {
    return posix.resolve(this.ctx.cwd, name);
  }

  private flushOut(): void {
    if (this.pending) this.o.bytes(Buffer.from(this.pending, 'latin1'));
    this.pending = '';
  }

  private err(text: string): void {
    this.flushOut();
    this.o.err(text);
  }

  async run(): Promise<ExecResult> {
    try {
      await this.main();
    } catch (e) {
      if (e instanceof SedDie) {
        this.err(`sed: ${e.message}\n`);
        this.exitCode = 1;
      } else if (e instanceof SedLimit) {
        this.err(`sed: command execution exceeded maximum iterations (${this.limit})\n`);
        this.exitCode = 126;
      } else throw e;
    }
    await this.closeWFiles();
    this.flushOut();
    const result: ExecResult & StdinLeft = this.o.result(this.exitCode);
    // What a `q` left of its stdin unread: on a terminal, sed has ended there (terminal-stdin.ts).
    const stdin = this.stdinStream;
    if (stdin && stdin.pos < stdin.data.length) result.jbStdinLeft = stdin.data.length - stdin.pos;
    return result;
  }

  /** sed_main after getopt. */
  private async main(): Promise<void> {
    const { line } = this;
    this.script = new SedScript(line.extended, (name) => this.openW(name));
    this.script.beQuiet = line.quiet;
    this.cycles = new SedCycles(this.script, this, this.limit);
    for (const text of line.scripts) await this.script.addBlock(latin1(text));
    for (const file of line.files) {
      const data = file === '-' ? this.stdinRest() : await this.readScriptFile(file);
      const lines = data.split('\n');
      if (lines.at(-1) === '') lines.pop();
      for (const l of lines) await this.script.add(l);
    }
    const operands = [...line.operands];
    if (line.scripts.length === 0 && line.files.length === 0) {
      if (operands.length === 0) {
        this.err(`${banner}${usage}`);
        this.exitCode = 1;
        return;
      }
      await this.script.addBlock(latin1(operands.shift()!));
    }
    await this.script.add('');
    this.inputs = operands;
    if (operands.length === 0) {
      if (line.inPlace !== undefined) throw new SedDie('-i requires an argument');
      this.inputs = ['-'];
      return this.processFiles();
    }
    for (let k = 0; k < operands.length; k++) {
      this.lastInput = k;
      if (line.inPlace === undefined) {
        if (operands[k] === '-') await this.processFiles();
        continue;
      }
      await this.inPlace(operands[k]!, line.inPlace);
    }
    await this.processFiles();
  }

  private get stdin(): Stream {
    return (this.stdinStream ??= { data: stdinBytes(this.ctx).toString('latin1'), pos: 0 });
  }

  private stdinRest(): string {
    const rest = this.stdin.data.slice(this.stdin.pos);
    this.stdin.pos = this.stdin.data.length;
    return rest;
  }

  private async readScriptFile(file: string): Promise<string> {
    const why = await openFailure(this.ctx.fs, this.ctx.cwd, file);
    if (why) throw new SedDie(`${file}: ${why}`);
    if (await isDirectory(this.ctx.fs, this.ctx.cwd, file)) return '';
    return Buffer.from(await this.ctx.fs.readFileBuffer(this.abs(file))).toString('latin1');
  }

  /** xfopen_for_write of a `w` file: made empty now, written when sed ends. */
  private async openW(name: string): Promise<SedWFile> {
    const known = this.wFiles.get(name);
    if (known) return known;
    try {
      await this.ctx.fs.writeFile(this.abs(fsName(name)), new Uint8Array());
    } catch (e) {
      throw new SedDie(say('sed', `can't open '${fsName(name)}'`, e).slice(5, -1));
    }
    const file: SedWFile = { name, data: [], lastChar: '\n' };
    this.wFiles.set(name, file);
    return file;
  }

  private async closeWFiles(): Promise<void> {
    for (const file of this.wFiles.values()) {
      if (file.data.length)
        await this.ctx.fs.writeFile(this.abs(fsName(file.name)), Buffer.from(file.data.join(''), 'latin1')).catch(() => undefined);
    }
  }

  /**
   * -i over one operand: its lines into a new file (mkstemp's `NAMEXXXXXX` beside it, which the
   * user must be able to make) renamed over the name, after a rename of the name to NAMESUFFIX with
   * a suffix. The name alone changes: a symlink is replaced by a file, a hard link stops being one.
   */
  private async inPlace(name: string, suffix: string): Promise<void> {
    const { fs } = this.ctx;
    const path = this.abs(name);
    const st = name === '-' ? undefined : await fs.stat(path).catch(() => undefined);
    if (!st) {
      this.err(`sed: ${name}: ${(await openFailure(fs, this.ctx.cwd, name)) ?? 'No such file or directory'}\n`);
      this.exitCode = 1;
      this.currentInput++;
      return;
    }
    const temp = `${name}${randomSuffix()}`;
    try {
      await fs.writeFile(this.abs(temp), new Uint8Array());
      await fs.rm(this.abs(temp));
    } catch (e) {
      throw new SedDie(say('sed', `can't create temp file '${temp}'`, e).slice(5, -1));
    }
    let out = '';
    this.sink = { write: (text) => (out += text) };
    await this.processFiles();
    this.sink = { write: (text) => (this.pending += text) };
    if (st.isDirectory) throw new SedDie(`can't move '${temp}' to '${name}': Is a directory`);
    const data = Buffer.from(out, 'latin1');
    const symlink = (await fs.lstat(path)).isSymbolicLink;
    const owner = await this.host.fs.entry(await fs.realpath(path));
    if (suffix) await fs.mv(path, `${path}${suffix}`);
    else if (symlink) await fs.rm(path);
    else await this.host.fs.separate(path);
    const target = suffix || symlink ? path : await fs.realpath(path);
    const spec = { uid: owner?.uid ?? this.host.uid, gid: owner?.gid ?? this.host.gid, mode: st.mode & 0o7777 };
    await this.host.fs.write(target, data, spec);
    await this.host.fs.setMeta(target, spec);
    for (const cmd of this.script.cmds) {
      cmd.begLine = cmd.begLineOrig;
      cmd.endLine = cmd.endLineOrig;
    }
  }

  /** process_files over the inputs from currentInput to lastInput. */
  private processFiles(): Promise<void> {
    return this.cycles.run(this.sink);
  }

  /** get_next_line's reading: the next line of the inputs up to lastInput (a line ends at a newline or a NUL). */
  async read(): Promise<Next | undefined> {
    for (; this.currentInput <= this.lastInput; this.currentInput++) {
      if (!this.current) {
        const fp = await this.open(this.inputs[this.currentInput]!);
        if (!fp) {
          this.exitCode = 1;
          continue;
        }
        this.current = fp;
      }
      const fp = this.current;
      if (fp.pos < fp.data.length) {
        let end = fp.pos;
        while (end < fp.data.length && fp.data[end] !== '\n' && fp.data[end] !== '\0') end++;
        const text = fp.data.slice(fp.pos, end);
        let gc = noEol;
        if (end < fp.data.length) {
          gc = fp.data[end]!;
          end++;
          if (gc === '\0' && end >= fp.data.length) gc = lastIsNul;
        }
        fp.pos = end;
        return { line: text, gc };
      }
      this.current = undefined;
    }
    return undefined;
  }

  /** Opens the next input: its bytes, or undefined (said) when it does not open. */
  private async open(name: string): Promise<Stream | undefined> {
    if (name === '-') return this.stdin;
    const why = await openFailure(this.ctx.fs, this.ctx.cwd, name);
    if (why) {
      this.err(`sed: ${name}: ${why}\n`);
      return undefined;
    }
    if (await isDirectory(this.ctx.fs, this.ctx.cwd, name)) return { data: '', pos: 0 };
    return { data: Buffer.from(await this.ctx.fs.readFileBuffer(this.abs(name))).toString('latin1'), pos: 0 };
  }

  /** The lines of a file `r` reads (none when it does not open). */
  async readLines(name: string): Promise<string[]> {
    const file = fsName(name);
    if ((await openFailure(this.ctx.fs, this.ctx.cwd, file)) || (await isDirectory(this.ctx.fs, this.ctx.cwd, file))) return [];
    const data = Buffer.from(await this.ctx.fs.readFileBuffer(this.abs(file))).toString('latin1');
    const lines = data.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines;
  }
}

/** mkstemp's six characters. */
function randomSuffix(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 6; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}
