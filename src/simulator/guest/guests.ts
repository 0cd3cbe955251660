import type { Command, CommandContext, CommandName, ExecResult, InMemoryFs } from 'just-bash';
import { posix } from 'node:path';
import type { SimInstance, SimSnapshot } from '../instance-model.js';
import { instanceKey } from '../instance-model.js';
import { shellBuiltins, type ShellBuiltins } from './shell-builtins.js';
import { probedArgs, readsTerminal } from './terminal-stdin.js';
import { guestCommands, harmlessSignals, scriptedCommand, sigint, sleepCommand, type GuestProcess } from './guest-commands.js';
import { GuestFs } from './guest-fs.js';
import { withRefusals } from './guest-access.js';
import { layOut } from './guest-layout.js';
import { streamsOf, withStreams, writtenThrough } from './guest-streams.js';
import type { ParsedTarEntryWithData } from 'modern-tar';
import { rootfsOf } from './image-rootfs.js';
import { busyboxCommands } from './busybox-programs.js';
import { aliasCommands } from './shell-aliases.js';
import { busyboxItself, busyboxSystem, type GuestNic, type GuestProcEntry } from './busybox-system.js';
import { busyboxText } from './busybox-text.js';
import { busyboxOptionLines } from './busybox-option-lines.js';
import { tacCommand } from './busybox-tac.js';
import { busyboxCat } from './busybox-cat.js';
import { busyboxFiles } from './busybox-files.js';
import { busyboxTty, type TerminalInput, type TerminalSize } from './busybox-tty.js';
import { busyboxLs } from './busybox-ls.js';
import { busyboxStat } from './busybox-stat.js';
import { busyboxCoreutils } from './busybox-coreutils.js';
import { guestInit, writeDevices, writeProc, writeSelf } from './guest-proc.js';
import { followedBy, orderOf, rewordedWrites, type OutputPart } from './program-output.js';
import { runToSyntaxError, ScriptFeed, type ScriptSource, type ScriptStream, type StdinPipe } from './script-feed.js';
import { ashStartVariables, endedShell, ShellProcesses, shellMessages, statusAfterExitTrap, type StreamedScript } from './nested-shell.js';
import { builtinShadows, scriptedBuiltinCommand, scriptedBuiltins } from './scripted-builtins.js';
import { ScriptedCommands, type CommandOutcome } from './scripted-commands.js';
import { pythonCommand } from './guest-python.js';
import { appletNames } from './busybox-applets.js';
import { programLookup, testPrograms, whichCommand } from './guest-programs.js';
import { shellQuote } from './program-run.js';
import type { GuestConsole } from './guest-console.js';

/** One command to run in a guest, as the exec request gives it. */
export interface GuestCommand {
  argv: readonly string[];
  /** The whole environment (the daemon's defaults already merged in). */
  environment: Record<string, string>;
  cwd?: string;
  user?: number;
  group?: number;
  /** What the command reads on stdin (empty: end of file at once). */
  stdin?: Buffer;
  /** Aborted with a signal number as its reason: the command is killed by that signal. */
  signal?: AbortSignal;
  /**
   * Signals sent to the command while it runs (`signal` events, the number as `detail`): the
   * shell's traps take them as they take its own `kill`'s, else they kill it.
   */
  signals?: EventTarget;
  /** The terminal it runs on (an interactive exec), which `stty` reads and resizes; none: no terminal. */
  terminal?: TerminalSize;
  /**
   * Stdin still arriving, for a bare shell (`sh` reading its script from a pipe): the shell runs each
   * command as its line comes ({@link ScriptFeed}) and hands what it writes to {@link output} as it goes.
   */
  stdinPipe?: StdinPipe;
  /**
   * The lines of a terminal, for a bare shell (`sh` on a terminal): already cut into whole commands
   * by the session's line editor, each asked for once the one before has run, as an interactive
   * shell reads them; it hands what it writes to {@link output} as it goes. Another command on the
   * terminal (`su`, `sh -c sh`) reads {@link tty}, and the first bare shell it starts there these lines.
   */
  lines?: ScriptSource;
  /**
   * Ctrl-C on the terminal while one of {@link lines} runs (an `interrupt` event): its programs end
   * with 130 and the rest of the line is dropped, and the shell reads its next line, as an
   * interactive ash does when its foreground job dies of SIGINT.
   */
  interrupts?: EventTarget;
  /** The terminal's input as a program reading it gets it, for the shell's `read`: a terminal session's shell (with {@link lines}), or `sh -c` on a terminal. */
  tty?: TerminalInput;
  /** What a shell reading {@link stdinPipe} or {@link lines} wrote so far; its result holds only the rest. */
  output?: (part: Omit<GuestResult, 'code'>) => void;
}

/** How a guest command ended. */
export interface GuestResult {
  stdout: Buffer;
  stderr: Buffer;
  code: number;
  /** Both streams in the order they were written, as a terminal shows them (when the order is known). */
  terminal?: Buffer;
}

/**
 * The programs of the busybox-like guest: just-bash's commands that busybox also has (no jq,
 * sqlite3, rg, yq, curl or language runtimes), plus the guest's own (guest-commands.ts).
 */
const busyboxPrograms = new Set([
  'echo',
  'cat',
  'printf',
  'ls',
  'mkdir',
  'rmdir',
  'touch',
  'rm',
  'cp',
  'mv',
  'ln',
  'chmod',
  'pwd',
  'readlink',
  'head',
  'tail',
  'wc',
  'stat',
  'grep',
  'fgrep',
  'egrep',
  'sed',
  'awk',
  'sort',
  'uniq',
  'cut',
  'paste',
  'tr',
  'rev',
  'nl',
  'fold',
  'expand',
  'unexpand',
  'strings',
  'tee',
  'find',
  'basename',
  'dirname',
  'du',
  'env',
  'xargs',
  'true',
  'false',
  'clear',
  'sh',
  'base64',
  'diff',
  'date',
  'timeout',
  'time',
  'seq',
  'expr',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'which',
  'tac',
  'od',
  'gzip',
  'gunzip',
  'zcat',
  'tar',
]) as ReadonlySet<string>;

const shells = new Set(['sh', 'ash']);

type JustBash = typeof import('just-bash');
let justBash: Promise<JustBash> | undefined;

/** just-bash takes ~0.7 s to load: only a simulator whose guests run something pays for it. */
function loadJustBash(): Promise<JustBash> {
  justBash ??= import('just-bash');
  return justBash;
}

/** A filesystem laid out as an image of `os` has it (the image's `os` property, copied into `image.os` on create; seeded instances are busybox). */
async function laidOut(config: SimInstance['config']): Promise<GuestFs> {
  const { InMemoryFs } = await loadJustBash();
  const memory: InMemoryFs = new InMemoryFs();
  const python = config['image.reflex.python'];
  await layOut(memory, config['image.os'] ?? 'busybox', python ? [python] : []);
  return new GuestFs(memory);
}

/** The virtual pid of the top shell of every command (`$$`). */
const shellPid = 58;

/**
 * The guests of one simulator: each instance's root filesystem, made on first use (by exec or
 * the files API, so 10,000 instances that are never touched cost nothing) from its image, kept
 * across stops, snapshots and renames, gone with the instance; and the shell that runs exec
 * commands over it (just-bash: a bash interpreter over an in-memory filesystem; it never starts
 * a host process nor touches a host file).
 */
export class Guests {
  /** Commands tests script (moto/LocalStack style). */
  readonly scripts = new ScriptedCommands();

  /**
   * `httpAfter`: scripts the HTTP endpoint of the instance a scripted command ran in, once the command
   * ended; `initExited`: the instance's init exited on a signal a command sent it (`reboot`, `kill 1`):
   * the instance stops as when its guest exits by itself.
   */
  constructor(
    private readonly httpAfter: (inst: SimInstance, script: NonNullable<CommandOutcome['httpAfter']>) => void = () => {},
    private readonly initExited: (inst: SimInstance) => void = () => {},
  ) {}

  private readonly filesystems = new WeakMap<SimInstance, Promise<GuestFs>>();
  /**
   * The commands whose jobs go on after the exec has ended (`daemon >/dev/null 2>&1 &`: a job whose
   * output does not go to the exec's), each as what kills them: they end with the instance's run.
   */
  private readonly lingering = new Map<SimInstance, Set<LeftRunning>>();

  /** The instance's guest has stopped (or restarts): the jobs its commands left running die with it. */
  ended(inst: SimInstance): void {
    for (const left of this.lingering.get(inst) ?? []) left.kill();
    this.lingering.delete(inst);
    // liblxc writes what the console's ring holds into its log file (a guest that failed to lay out wrote nothing: its failure is the exec's).
    void this.filesystems.get(inst)?.then(
      (fs) => fs.console.stopped(),
      () => undefined,
    );
  }

  /** The instance's console, once its guest was used (a guest never used wrote nothing to it). */
  async consoleOf(inst: SimInstance): Promise<GuestConsole | undefined> {
    return (await this.filesystems.get(inst))?.console;
  }

  /** The jobs the instance's earlier commands left running, as `ps` lists them: init's orphans. */
  private leftRunning(inst: SimInstance): GuestProcEntry[] {
    return [...(this.lingering.get(inst) ?? [])].flatMap((left) => jobEntries(left.jobs, 1, left.argv));
  }

  /** The simulator stops: every job left running dies. */
  close(): void {
    for (const inst of [...this.lingering.keys()]) this.ended(inst);
  }

  /** What each snapshot's filesystem was; none when the instance's was never made (then: its image). */
  private readonly snapshotFilesystems = new WeakMap<SimSnapshot, Promise<GuestFs>>();

  /** Keeps a copy of the instance's filesystem as the snapshot's (nothing to keep if it was never made), made as the beds' `dir` pools make it (`rsync --sparse`). */
  snapshot(inst: SimInstance, snap: SimSnapshot): void {
    const fs = this.filesystems.get(inst);
    if (fs)
      this.snapshotFilesystems.set(
        snap,
        fs.then((f) => f.clone('sparse')),
      );
  }

  /**
   * Puts the snapshot's filesystem back as the instance's (the snapshot keeps its own copy); a file
   * whose bytes did not change since keeps its blocks, as the beds' rsync leaves it alone.
   */
  restore(inst: SimInstance, snap: SimSnapshot): void {
    const kept = this.snapshotFilesystems.get(snap);
    const current = this.filesystems.get(inst);
    if (!kept) this.filesystems.delete(inst);
    else
      this.filesystems.set(
        inst,
        kept.then(async (f) => {
          const restored = await f.clone();
          const now = await current?.catch(() => undefined);
          if (now) await restored.blocksOfUnchanged(now);
          return restored;
        }),
      );
  }

  /** The filesystems of published images (by fingerprint): what an instance made from one starts from. */
  private readonly imageFilesystems = new Map<string, Promise<GuestFs>>();

  /** Keeps the instance's (or the snapshot's) filesystem as a published image's (nothing when it was never made: then its image's). */
  publish(from: SimInstance, snap: SimSnapshot | undefined, fingerprint: string): void {
    const source = snap ? this.snapshotFilesystems.get(snap) : this.filesystems.get(from);
    if (source)
      this.imageFilesystems.set(
        fingerprint,
        source.then((f) => f.clone('written')),
      );
  }

  /** Gives an instance made from a published image that image's filesystem. */
  fromImage(fingerprint: string, to: SimInstance): void {
    const kept = this.imageFilesystems.get(fingerprint);
    if (kept)
      this.filesystems.set(
        to,
        kept.then((f) => f.clone('written')),
      );
  }

  /**
   * What a publish packs: the snapshot's filesystem or the instance's, as it is now; the image's
   * layout when it was never made (a snapshot taken before anything touched the instance).
   */
  publishedFs(from: SimInstance, snap: SimSnapshot | undefined): Promise<GuestFs> {
    if (!snap) return this.fs(from);
    return this.snapshotFilesystems.get(snap) ?? laidOut(from.config);
  }

  /** Keeps the files under `rootfs/` of an uploaded unified image the simulator published (its export) as what an instance made from it starts from. */
  async adoptImage(fingerprint: string, entries: readonly ParsedTarEntryWithData[]): Promise<void> {
    const fs = await rootfsOf(entries, async () => new (await loadJustBash()).InMemoryFs());
    if (fs) this.imageFilesystems.set(fingerprint, Promise.resolve(fs));
  }

  /** Forgets a deleted image's filesystem. */
  forgetImage(fingerprint: string): void {
    this.imageFilesystems.delete(fingerprint);
  }

  /** Gives a copy (`lxc copy c1[/snap] c2`) the filesystem of its source, as it is now or as the snapshot kept it. */
  copy(from: SimInstance, snap: SimSnapshot | undefined, to: SimInstance): void {
    const source = snap ? this.snapshotFilesystems.get(snap) : this.filesystems.get(from);
    if (source)
      this.filesystems.set(
        to,
        source.then((f) => f.clone('sparse')),
      );
  }

  /** just-bash's parser, which the guest's shell runs with (a terminal session cuts its lines into commands with it). */
  async parser(): Promise<JustBash['parse']> {
    return (await loadJustBash()).parse;
  }

  /** The instance's root filesystem, laid out from its image on first use. */
  fs(inst: SimInstance): Promise<GuestFs> {
    let fs = this.filesystems.get(inst);
    if (!fs) {
      fs = laidOut(inst.config);
      this.filesystems.set(inst, fs);
    }
    return fs;
  }

  /**
   * Runs a command in the instance as the daemon would: `sh -c SCRIPT` (or bash, ash) runs the
   * script; anything else is the program itself, found on PATH, with its arguments as they are
   * (127 "not found" and 126 "not executable" with nothing on stderr, as the daemon reports a
   * program it cannot start). A kill ends it with 128 + the signal and no output.
   */
  async run(inst: SimInstance, cmd: GuestCommand): Promise<GuestResult> {
    const justBash = await loadJustBash();
    const { Bash } = justBash;
    const fs = await this.fs(inst);
    const uid = cmd.user ?? 0;
    const gid = cmd.group ?? 0;
    // A kill does not abort the interpreter (it would drop the output so far): the program that
    // blocks returns, and every program after it does nothing, so the script runs out with the
    // output it had. Only a script that keeps going without end is aborted, and loses its output.
    const killer = new AbortController();
    const runaway = new AbortController();
    let afterKill = 0;
    const kill = (signal: number): void => {
      if (!killer.signal.aborted) killer.abort(signal);
    };
    // The exec ended from outside (its operation, the instance stopping) ends every process of it;
    // a signal to the exec's shell (its own kill, the control socket's) ends that shell alone: a
    // shell it started goes on (`sh -c 'kill $PPID; echo child'` prints `child`).
    let endedAll = false;
    const onOuterAbort = (): void => {
      endedAll = true;
      kill(Number(cmd.signal?.reason) || 9);
    };
    if (cmd.signal?.aborted) onOuterAbort();
    cmd.signal?.addEventListener('abort', onOuterAbort, { once: true });
    // The line of a terminal session running now can be interrupted (Ctrl-C): a new line, a new interrupt.
    let interrupt = new AbortController();
    const onInterrupt = (): void => interrupt.abort(sigint);
    cmd.interrupts?.addEventListener('interrupt', onInterrupt);
    const gate: ProgramGate = {
      killed: killer.signal,
      interrupted: () => interrupt.signal,
      stillAlive() {
        // A job a signal killed runs no more programs, as the command does once killed.
        if (shellState.killed().aborted) return false;
        if (!killer.signal.aborted || (!endedAll && processes.inside)) return true;
        if (++afterKill > maxProgramsAfterKill) runaway.abort();
        return false;
      },
    };
    /** What ends any wait of the command's: it is killed, or interrupted (Ctrl-C). */
    const waitsEnd = (): AbortSignal => AbortSignal.any([killer.signal, interrupt.signal]);
    /** Waits, ending early when the command (or the process waiting) is killed or interrupted, or its own signal (e.g. `timeout`) fires. */
    const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
      sleepUnlessAborted(ms, AbortSignal.any([waitsEnd(), shellState.killed(), ...(signal ? [signal] : [])]));
    // A signal init exits on ends it once the command has ended (the daemon's exec returns first).
    let initEnds = false;
    const init = await guestInit(fs, inst.config['raw.lxc']);
    const signalInit = (signal: number): void => {
      if (uid === 0 && init.exitsOn.has(signal)) initEnds = true;
    };
    // A signal the shell's own kill or killall sends it: its trap's, else its default action's.
    const signalSelf = (signal: number): void => {
      if (!shellState.signals.deliver(signal)) kill(signal);
    };
    // A signal from outside (the exec's control socket) reaches the shell as its own kill's does:
    // a trapped one runs its action once the command it waits for has ended, as busybox's sh does.
    const onSignal = (event: Event): void => signalSelf(Number((event as CustomEvent<number>).detail));
    cmd.signals?.addEventListener('signal', onSignal);
    const proc: GuestProcess = {
      hostname: () => inst.nodeName,
      setHostname: (name) => (inst.nodeName = name),
      uid,
      gid,
      pid: shellPid,
      killSelf: signalSelf,
      signalInit,
      signalShell: (pid, signal) =>
        processes.signal(pid, signal) ||
        shellState.signalJob(pid, signal) ||
        [...(this.lingering.get(inst) ?? [])].some((left) => left.jobs.signalJob(pid, signal)),
      jobPid: (spec) => shellState.jobPid(spec),
    };
    const key = instanceKey(inst.project, inst.name);
    const scriptEnded = (outcome: CommandOutcome, interrupted: boolean): void => {
      if (outcome.httpAfter && !interrupted && !killer.signal.aborted) this.httpAfter(inst, outcome.httpAfter);
    };
    const programs = this.scripts.programsFor(key);
    const take = (argv: string[]) => this.scripts.take(key, argv);
    const scripted = [...programs].map((name) => scriptedCommand(name, take, pause, scriptEnded));
    // A scripted shell builtin (`test`) is shadowed by a function: the shell never asks a program of its name.
    const builtins = scriptedBuiltins(programs);
    if (builtins.length) scripted.push(scriptedBuiltinCommand(take, pause, scriptEnded));
    const shellState = shellBuiltins(() => cmd.lines?.typed?.() ?? []);
    // A named pipe's open waits as a sleep does.
    shellState.endWaitsWith(waitsEnd);
    const startVariables = () => ashStartVariables(inst.nodeName);
    const processes = new ShellProcesses(shellPid, shellState, justBash.parse, startVariables);
    /** What a shell wrote so far, to {@link GuestCommand.output} (in the order written, on a terminal). */
    const sendOutput = (stdout: string, stderr: string, writes: OutputPart[]): void => {
      const { code: _code, ...part } = ended(writes, 0, !!cmd.terminal);
      cmd.output?.(part);
    };
    const lines = cmd.lines;
    const feed: ScriptSource | undefined = cmd.stdinPipe
      ? new ScriptFeed(justBash.parse, cmd.stdinPipe)
      : lines && {
          next: (state) => {
            interrupt = new AbortController();
            return lines.next(state);
          },
          cut: () => interrupt.signal.aborted,
          shellStarted: () => lines.shellStarted?.(),
          shellEnded: () => lines.shellEnded?.(),
        };
    const [program, ...args] = cmd.argv;
    // A terminal's lines are the command's when it is a bare shell (`lxc exec -t c -- sh`); another
    // command runs on the terminal (`su`, `sh -c sh`), and the first shell it starts there reads them.
    const sessionShell = lines !== undefined && args.length === 0 && shells.has(basename(program ?? ''));
    if (feed) {
      // A killed shell reads no more of its script.
      if (feed instanceof ScriptFeed) killer.signal.addEventListener('abort', () => feed.end(), { once: true });
      const streamed: StreamedScript = { feed, interactive: !!lines, ...(cmd.tty ? { tty: cmd.tty } : {}), write: sendOutput };
      if (lines && !sessionShell) processes.offerTerminal(streamed);
      else processes.stdinScript = streamed;
    }
    const shell = shells.has(basename(program ?? '')) && args[0] === '-c';
    const shellName = shell ? basename(program ?? 'sh') : undefined;
    // The programs written here read the guest's files as the command's user may (guest-access.ts).
    // A command has a controlling terminal only when the exec gave it one (`/dev/tty` is ENXIO to it otherwise).
    const self = { uid, gid, tty: cmd.terminal !== undefined };
    const seen = fs.seenBy(self);
    // The jobs running beside the command's shell, and those earlier commands left running.
    const jobsNow = (): GuestProcEntry[] => [...jobEntries(shellState, shellPid, cmd.argv), ...this.leftRunning(inst)];
    const own = [
      ...busyboxCommands({ fs: seen, uid, gid, init, pid: shellPid, umask: shellState.umask, jobs: jobsNow }),
      ...aliasCommands(),
      ...busyboxSystem({
        fs: seen,
        uid,
        gid,
        init,
        pid: shellPid,
        hostname: () => inst.nodeName,
        shell: shellName,
        network: () => (inst.renderState('earlier').network ?? {}) as Record<string, GuestNic>,
        cpuLimit: inst.config['limits.cpu'],
        pause,
        killSelf: signalSelf,
        signalInit,
        umask: shellState.umask,
        jobs: jobsNow,
        signalJob: (pid, signal) => proc.signalShell(pid, signal),
      }),
      ...busyboxText(),
      ...busyboxOptionLines(),
      tacCommand(),
      ...busyboxFiles({ fs: seen, uid, gid, umask: shellState.umask }),
      ...busyboxTty(cmd.terminal),
      ...guestCommands(proc),
      sleepCommand(pause),
      busyboxLs({ fs: seen, uid, gid }, cmd.terminal),
      busyboxStat({ fs: seen, uid, gid }),
      ...busyboxCoreutils(shellState.umask),
      busyboxCat(),
      whichCommand(),
      ...testPrograms(),
      ...shellState.commands,
      processes.command('sh'),
      processes.command('ash'),
      // An image that carries Python says where (`reflex.python`): its guests run a real CPython.
      ...(inst.config['image.reflex.python'] ? [pythonCommand(inst.config['image.reflex.python'], justBash, { uid, gid })] : []),
      ...scripted,
    ];
    const ownNames = new Set(own.map((c) => c.name));
    // An applet of the bed's busybox the simulator does not have answers so, where busybox would run it.
    const missing = appletNames.filter((n) => !ownNames.has(n) && !busyboxPrograms.has(n) && n !== 'busybox').map(notSimulated);
    // What a link to busybox runs: its applets, and a program of the image's own (python3).
    const python = inst.config['image.reflex.python'];
    const runnable = new Set([...appletNames, ...(python ? [basename(python)] : [])]);
    // /proc/self is the process that reads it: each program while it runs, the shell (or the program run alone) between.
    const top = { comm: shellName ?? basename(program ?? 'sh'), argv: [...cmd.argv] };
    const asSelf = (comm: string, argv: readonly string[]): Promise<void> =>
      writeSelf(fs, top.comm === comm && argv === top.argv ? shellPid : shellPid + 1, comm, argv, uid, gid);
    const custom: Command[] = [
      ...own,
      ...missing,
      busyboxItself(() => [...appletNames]),
      ...[...busyboxPrograms].filter((n) => !ownNames.has(n)).map(passThrough),
    ].map((c) =>
      gated(c, gate, {
        before: async (args) => {
          shellState.runs([c.name, ...args]);
          writeDevices(fs);
          await asSelf(c.name, [c.name, ...args]);
        },
        after: () => {
          shellState.runs(undefined);
          shellState.reap();
          return asSelf(top.comm, top.argv);
        },
      }),
    );
    const bash = new Bash({
      fs: fs.as(
        self,
        shellState.umask,
        programLookup(
          runnable,
          (path) => fs.memory.readFileBuffer(path),
          (path) => processes.script(path),
        ),
      ),
      cwd: '/',
      env: {},
      defenseInDepth: false,
      processInfo: { pid: shellPid, ppid: 0, uid, gid },
      commands: [...busyboxPrograms] as CommandName[],
      customCommands: custom,
    });
    await writeProc(fs, init);
    writeDevices(fs);
    await asSelf(top.comm, top.argv);
    if (shellName) await writeSelf(fs, shellPid, top.comm, top.argv, uid, gid, `/proc/${shellPid}`);
    // liblxc's attach only warns when it cannot change to the directory asked for: the command then runs in `/`.
    const asked = posix.resolve('/', cmd.cwd ?? (uid === 0 ? '/root' : '/'));
    const cwd = (await seen.entry(asked))?.type === 'directory' ? asked : '/';
    // `sh -c CMD NAME ARGS…`: NAME is $0 and the name the shell's messages start with (with the
    // line, as ash words them for a named script: `NAME: line 0: x: not found`), ARGS are $1….
    const [named, ...positional] = shell ? args.slice(2) : [];
    const name = named ?? program ?? 'sh';
    const parameters: Record<string, string> = shell
      ? { '0': name, '#': String(positional.length), '@': positional.join(' '), '*': positional.join(' ') }
      : {};
    positional.forEach((value, i) => (parameters[String(i + 1)] = value));
    const scriptNamed: object = named === undefined ? {} : { jbScript: true };
    // Its jobs' pids come after those earlier commands' jobs still running have.
    const left = this.leftRunning(inst).map((j) => j.pid);
    const keepJobs: object = { jbKeepJobs: true, ...(left.length ? { jbNextPid: Math.max(...left) + 1 } : {}) };
    // A command on a terminal (not a session's shell, which reads its lines): what reads its stdin
    // (`sh -c`'s `read`, a program such as `cat`) reads the terminal.
    const onTerminal = !sessionShell ? cmd.tty : undefined;
    // The shell is busybox's `sh`, not bash: its messages start with the name it was called by
    // (`/bin/sh: …` when called so, as Ansible does), and a program it cannot find, by name or by
    // path, is `X: not found`.
    const words = (text: string) => shellMessages(text, name, shell ? args[1] : undefined);
    try {
      // The shell runs as the exec's shell process: the jobs and shells it starts run in their own.
      const execute = (script: string, stream?: ScriptStream) =>
        shellState.run(() =>
          bash.exec(builtinShadows(builtins) + script, {
            // busybox's sh counts its level (SHLVL=1 for `sh -c`); a program run alone has none. The
            // shell's $0 is the name it was called by, which its messages start with wherever they go
            // (the patched shell names them so when a redirection sends them to a file or stdout).
            env: shell ? { ...cmd.environment, ...(cmd.environment.SHLVL === undefined ? { SHLVL: '1' } : {}), ...parameters } : cmd.environment,
            replaceEnv: true,
            ...(shell ? { jbShellVars: startVariables() } : {}),
            cwd,
            stdin: (cmd.stdin ?? Buffer.alloc(0)).toString('latin1'),
            stdinKind: 'bytes',
            signal: runaway.signal,
            rawScript: true,
            ...(shell ? { jbFlags: 'c' } : { args }),
            ...scriptNamed,
            ...(stream ? { jbStream: stream } : {}),
            ...(onTerminal ? { jbTty: onTerminal } : {}),
            // Without a terminal its streams are the host's pipes, which no one in the container opens again (/dev/stdin: guest-streams.ts).
            ...(cmd.terminal === undefined ? { jbHost: true } : {}),
            // Its jobs outlive it: they hold the exec's output until they end (below).
            ...keepJobs,
          } as Parameters<typeof bash.exec>[1]),
        );
      // `sh -c` with a syntax error runs the commands before its line first, as ash does. On a
      // terminal what each statement writes goes out as it ends (before a `read` waits for a key),
      // and so does what a program alone writes as it reads the lines typed (`cat`); what it writes
      // as it ends, with a message, waits for its end (one not found says nothing: the client does).
      let ending: ExecResult | undefined;
      const flush =
        onTerminal && cmd.output && (shell || readsTerminal(program ?? ''))
          ? (written: { stdout: string; stderr: string }) => {
              if (!shell && written.stderr) ending = ending ? followedBy(ending, written as ExecResult) : (written as ExecResult);
              else sendOutput(written.stdout, words(written.stderr), rewordedWrites(written as ExecResult, words));
            }
          : undefined;
      const script = shell ? (args[1] ?? '') : shellQuote(program ?? '');
      const ran = builtins.length === 0 ? await runToSyntaxError(justBash.parse, script, execute, flush) : await execute(script);
      const result = ending ? followedBy(ending, ran) : ran;
      // Jobs whose output goes elsewhere than the exec's go on after it ends, until the instance stops.
      const jobsEnd = (ran as ExecResult & { jbBgAll?: Promise<void> }).jbBgAll;
      if (jobsEnd) {
        shellState.orphan();
        const end: LeftRunning = { kill: () => kill(9), jobs: shellState, argv: top.argv };
        const left = this.lingering.get(inst) ?? new Set();
        this.lingering.set(inst, left.add(end));
        void jobsEnd.finally(() => left.delete(end));
      }
      if (killer.signal.aborted) return killed(killer.signal.reason as number, runaway.signal.aborted ? undefined : result);
      // A program the exec names that does not exist, by name or by path: the daemon's exec fails, and says nothing in the output.
      if (
        !shell &&
        result.exitCode === 127 &&
        (/command not found|command not available in browser/.test(result.stderr) || isMissingPath(result.stderr, program))
      )
        return ended([], 127);
      if (!shell && result.exitCode === 126) return ended([], 126);
      // The EXIT trap runs as the shell ends, in the state the script left (its variables, its
      // directory, its status as `$?` and its options: the patched shell's `jbStatus`, `jbOptions`).
      const onExit = shellState.exitTrap();
      const trapped = onExit
        ? await shellState.run(() =>
            bash.exec(onExit, {
              env: result.env,
              replaceEnv: true,
              cwd: result.env?.PWD ?? cwd,
              stdinKind: 'bytes',
              signal: runaway.signal,
              rawScript: true,
              ...(cmd.terminal === undefined ? { jbHost: true } : {}),
              ...endedShell(result, shell ? 'c' : ''),
            } as Parameters<typeof bash.exec>[1]),
          )
        : undefined;
      // Jobs still running when the shell ended hold its stdout and stderr: the exec ends with the
      // last of them, what they wrote after the shell's end (and its EXIT trap's output) following.
      const late = (await (ran as ExecResult & { jbBgRest?: Promise<ExecResult[]> }).jbBgRest) ?? [];
      const written = [...(trapped ? [trapped] : []), ...late].reduce<ExecResult>(followedBy, result);
      // Each write goes out in its own encoding; on a terminal both streams show in the order written.
      return ended(rewordedWrites(written, words), statusAfterExitTrap(result, trapped), !!cmd.terminal);
    } finally {
      cmd.signal?.removeEventListener('abort', onOuterAbort);
      cmd.signals?.removeEventListener('signal', onSignal);
      cmd.interrupts?.removeEventListener('interrupt', onInterrupt);
      if (initEnds) this.initExited(inst);
    }
  }
}

/** A command's jobs left running after it ended, and what ends them. */
interface LeftRunning {
  kill: () => void;
  jobs: ShellBuiltins;
  /** The command's own argv: a job between its programs shows as its shell, forked from it. */
  argv: readonly string[];
}

/** The running jobs as `ps` lists them: each the program it runs now, or the shell it was forked from. */
function jobEntries(jobs: ShellBuiltins, ppid: number, shellArgv: readonly string[]): GuestProcEntry[] {
  return jobs.runningJobs().map(({ pid, program }) => {
    const argv = [...(program ?? shellArgv)];
    return { pid, ppid, comm: basename(argv[0] ?? 'sh'), argv };
  });
}

/** How many programs a killed script may still reach (each doing nothing) before the interpreter is aborted. */
const maxProgramsAfterKill = 1000;

/** Whether the command is still alive: each program asks before it runs. */
interface ProgramGate {
  /** Aborted (reason: the signal number) when the command is killed. */
  killed: AbortSignal;
  /** The interrupt of the terminal line running now (Ctrl-C): aborted, its programs end with 130. */
  interrupted(): AbortSignal;
  /** False once the command is killed (the program then does nothing). */
  stillAlive(): boolean;
}

/** What runs around each program: before it starts (with its arguments) and after it ends. */
interface ProgramHooks {
  before: (args: string[]) => Promise<void>;
  after: () => Promise<void>;
}

/**
 * A program that does nothing once the command is killed, and otherwise what it did, with the hooks
 * around it. One that fails by throwing the filesystem's error (`nl`, `md5sum`, `xxd` on a file that
 * does not open) says why in busybox's words ({@link withRefusals}), status 1.
 */
function gated(command: Command, gate: ProgramGate, hooks: ProgramHooks): Command {
  return {
    name: command.name,
    execute: async (args, ctx) => {
      const interrupt = gate.interrupted();
      // A program interrupted while it read the terminal runs once more on the lines it read (patches/README.md 46).
      const readBeforeInterrupt = (ctx as CommandContext & { jbCutAfter?: boolean }).jbCutAfter === true;
      if (interrupt.aborted && !readBeforeInterrupt) return { stdout: '', stderr: '', exitCode: 128 + sigint };
      if (!gate.stillAlive()) return { stdout: '', stderr: '', exitCode: 128 + (Number(gate.killed.reason) || 9) };
      await hooks.before(args);
      // What it opens of /proc/self/fd (/dev/stdin …) is its own descriptors, as its shell set them.
      const streams = streamsOf((ctx as CommandContext & { jbFds?: Parameters<typeof streamsOf>[0] }).jbFds, () => String(ctx.stdin ?? ''));
      try {
        const ran = await withStreams(streams, () => command.execute(args, ctx)).catch(async (e: unknown) => {
          // The in-memory filesystem's errors carry their errno in `code`, or only at the head of the message.
          if (!/^E[A-Z]+$/.test(String((e as { code?: unknown } | undefined)?.code)) && !/^E[A-Z]+: /.test(String((e as Error | undefined)?.message)))
            throw e;
          return {
            stdout: '',
            stderr: await withRefusals(command.name, `${command.name}: ${(e as Error).message}\n`, ctx.fs, ctx.cwd, args),
            exitCode: 1,
          };
        });
        // What it wrote through /dev/stdout or /dev/stderr (`tee /dev/stderr` in a pipe) goes where it writes.
        const through = writtenThrough(streams);
        const result = through.stdout || through.stderr ? followedBy(ran, { ...through, exitCode: ran.exitCode }) : ran;
        // Interrupted while it ran: it died of SIGINT (what it wrote before stays).
        return interrupt.aborted ? { ...result, exitCode: 128 + sigint } : result;
      } finally {
        await hooks.after();
      }
    },
  };
}

/** An applet of the bed's busybox that the simulator does not run: it says so, with busybox's status for an applet it lacks. */
function notSimulated(name: string): Command {
  return { name, execute: async () => ({ stdout: '', stderr: `${name}: applet not simulated by the Reflex simulator\n`, exitCode: 127 }) };
}

/** One of just-bash's own programs, its messages about files it could not open in busybox's words ({@link withRefusals}). */
function passThrough(name: string): Command {
  return {
    name,
    async execute(args, ctx) {
      if (!ctx.origCommand) return { stdout: '', stderr: `sh: ${name}: not found\n`, exitCode: 127 };
      const result = await ctx.origCommand(probedArgs(name, args, () => String(ctx.stdin)));
      return { ...result, stderr: await withRefusals(name, result.stderr, ctx.fs, ctx.cwd, args) };
    },
  };
}

/** A killed command: 128 + the signal, with the output it wrote before (none when it had to be aborted). */
function killed(signal: number, sofar?: ExecResult): GuestResult {
  const code = harmlessSignals.has(signal) ? 0 : 128 + signal;
  return sofar ? ended(orderOf(sofar), code) : { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), code };
}

/**
 * A command's result as bytes, from its writes in the order written: each program's raw bytes as
 * they are, text in UTF-8, so what one program wrote as bytes (`printf '\xff' > f`) changes nothing
 * of another's text. On a terminal, the writes of both streams in their order are what it shows.
 */
function ended(writes: OutputPart[], code: number, terminal = false): GuestResult {
  const bytes = (fd?: 1 | 2) => Buffer.concat(writes.filter(([to]) => fd === undefined || to === fd).map(([, text, raw]) => stdoutBytes(text, raw)));
  return { stdout: bytes(1), stderr: bytes(2), code: code & 0xff, ...(terminal ? { terminal: bytes() } : {}) };
}

/** A write's bytes: raw ones each character up to U+00FF its byte (text beyond Latin-1 stays UTF-8), text as {@link outputBytes}. */
function stdoutBytes(stdout: string, raw: boolean): Buffer {
  return raw && !/[^\u0000-\u00ff]/.test(stdout) ? Buffer.from(stdout, 'latin1') : outputBytes(stdout);
}

/**
 * just-bash hands output back as text: valid UTF-8 decoded, anything else as one character per
 * byte. Text in the Latin-1 range is read as UTF-8 unless it carries control bytes (binary).
 */
function outputBytes(text: string): Buffer {
  // eslint-disable-next-line no-control-regex
  if (!/[^\u0000-\u00ff]/.test(text) && /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/.test(text) && /[\u0080-\u00ff]/.test(text)) {
    return Buffer.from(text, 'latin1');
  }
  return Buffer.from(text, 'utf8');
}

function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The shell's words for a path it could not run (`bash: /x: No such file or directory`), and nothing else. */
function isMissingPath(stderr: string, program: string | undefined): boolean {
  return program !== undefined && program.includes('/') && stderr === `bash: ${program}: No such file or directory\n`;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
