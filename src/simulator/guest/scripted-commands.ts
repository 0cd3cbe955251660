import { SimHttpError } from '../envelope.js';
import { checkHttpScript, type HttpScript } from './http-scripts.js';

/** What one call of a scripted command does. */
export interface CommandOutcome {
  stdout?: string;
  stderr?: string;
  /** Default 0. */
  exitCode?: number;
  /** Runs this long before it ends (a signal ends it earlier). Default 0. */
  delayMs?: number;
  /** Never ends by itself: only a signal (a kill through the control socket, an exec timeout) ends it. */
  hang?: boolean;
  /**
   * When the call ends (not killed), the instance's HTTP endpoint answers with these outcomes from
   * then on (a script of this instance alone, replacing its own for the same path and port): how
   * `systemctl restart nginx` repairs, or breaks, the service a probe watches.
   */
  httpAfter?: Omit<HttpScript, 'instance' | 'project'>;
}

/**
 * A command whose behaviour a test decides, the way moto or LocalStack let tests shape a fake:
 * `systemctl restart nginx` exits 1 on its first call and 0 after, prints what it is told,
 * takes its time or hangs.
 */
export interface CommandScript {
  /**
   * The command line it answers: a program and leading arguments (`systemctl restart nginx`). A
   * call matches when its words start with these; the longest match wins.
   */
  command: string;
  /** The outcome of the first call, the second, …; the last one repeats. At least one. */
  outcomes: CommandOutcome[];
  /** Only in this instance (every instance when absent). */
  instance?: string;
  /** The instance's project. Default `default`. */
  project?: string;
}

/** A registered script with its calls, per instance ("project/name"). */
interface Registered {
  words: string[];
  script: CommandScript;
  calls: Map<string, number>;
}

/**
 * The scripted commands of one simulator. Calls are counted per instance: each guest has its
 * own service, so `systemctl restart nginx` fails once on every instance it is scripted for.
 */
export class ScriptedCommands {
  private readonly scripts: Registered[] = [];
  /** Bumped on every change: a guest rebuilds its shell when the set of programs changed. */
  version = 0;

  /** Registers a script (replacing one for the same command line and instance). */
  define(script: CommandScript): void {
    const words = script.command.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) throw new SimHttpError(400, 'command is required');
    if (!Array.isArray(script.outcomes) || script.outcomes.length === 0) throw new SimHttpError(400, 'outcomes must list at least one outcome');
    if (script.outcomes.some((o) => typeof o !== 'object' || o === null || (o.exitCode !== undefined && !Number.isInteger(o.exitCode))))
      throw new SimHttpError(400, 'each outcome is an object {stdout, stderr, exitCode, delayMs, hang, httpAfter}');
    for (const o of script.outcomes) if (o.httpAfter !== undefined) checkHttpScript({ ...o.httpAfter, instance: undefined, project: undefined });
    const project = script.project ?? 'default';
    const same = this.scripts.findIndex(
      (r) => r.words.join(' ') === words.join(' ') && r.script.instance === script.instance && (r.script.project ?? 'default') === project,
    );
    const entry: Registered = { words, script: { ...script, project }, calls: new Map() };
    if (same >= 0) this.scripts[same] = entry;
    else this.scripts.push(entry);
    this.version++;
  }

  /** Forgets every script. */
  clear(): void {
    this.scripts.length = 0;
    this.version++;
  }

  /** The programs scripted for an instance (the first words). */
  programsFor(instanceKey: string): Set<string> {
    return new Set(this.scripts.filter((r) => applies(r, instanceKey)).map((r) => r.words[0]!));
  }

  /** The outcome of a call of `argv` in an instance, counted; undefined when no script answers it. */
  take(instanceKey: string, argv: readonly string[]): CommandOutcome | undefined {
    let best: Registered | undefined;
    for (const r of this.scripts) {
      if (!applies(r, instanceKey) || r.words.length > argv.length) continue;
      if (!r.words.every((w, i) => w === argv[i])) continue;
      // The longest match wins; among equals, one for this instance over one for every instance.
      if (!best || r.words.length > best.words.length || (r.words.length === best.words.length && r.script.instance !== undefined)) best = r;
    }
    if (!best) return undefined;
    const n = best.calls.get(instanceKey) ?? 0;
    best.calls.set(instanceKey, n + 1);
    return best.script.outcomes[Math.min(n, best.script.outcomes.length - 1)];
  }

  /** Every script with its calls per instance. */
  list(): (CommandScript & { calls: Record<string, number> })[] {
    return this.scripts.map((r) => ({ ...r.script, calls: Object.fromEntries(r.calls) }));
  }

  /** How often a command line was answered in an instance ("project/name"), over every script that matched it. */
  calls(instanceKey: string, command: string): number {
    const line = command.trim().split(/\s+/).join(' ');
    return this.scripts.filter((r) => r.words.join(' ') === line).reduce((n, r) => n + (r.calls.get(instanceKey) ?? 0), 0);
  }
}

function applies(r: Registered, instanceKey: string): boolean {
  return r.script.instance === undefined || `${r.script.project ?? 'default'}/${r.script.instance}` === instanceKey;
}
