import { Died } from './busybox-deb.js';

/** The fields of a control paragraph as busybox's read_package_field finds them (continuation lines kept in the value). */
function fields(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const m of text.matchAll(/^([^:\n]*):[ \t]*((?:[^\n]*)(?:\n[ \t][^\n]*)*)/gm)) {
    const name = m[1]!.replace(/^[ \t]+/, '');
    if (name === '') break;
    if (m[2] !== '') out.push([name, m[2]!]);
  }
  return out;
}

/** The value after `key` (busybox's strstr, wherever it is) up to the end of its line. */
export function after(text: string, key: string): string | undefined {
  const at = text.indexOf(key);
  if (at < 0) return undefined;
  const rest = text.slice(at + key.length).replace(/^[ \n\t]+/, '');
  return rest.slice(0, rest.indexOf('\n') < 0 ? undefined : rest.indexOf('\n'));
}

/** The status file cut at each blank line, as xmalloc_fgetline_str(…, "\n\n") reads it. */
export function paragraphs(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\n\n', at);
    out.push(text.slice(at, end < 0 ? undefined : end));
    at = end < 0 ? text.length : end + 2;
  }
  return out;
}

/** busybox's make_hash: where a name's probe starts and how it steps in a table of `prime` slots. */
function hashOf(key: string, prime: number): { start: number; step: number } {
  const bytes = Buffer.from(key, 'latin1');
  let hash = BigInt(bytes[0] ?? 0);
  for (let i = 1; i < bytes.length; i++) hash += BigInt(((bytes[i]! + bytes[i - 1]!) << ((bytes[i]! * i) % 24)) | 0);
  hash = BigInt.asUintN(64, hash);
  return { start: Number(BigInt.asUintN(32, hash) % BigInt(prime)), step: 1 + Number(hash % BigInt(prime - 1)) };
}

/** One package as the status table holds it. */
export interface Package {
  name: string;
  version: string;
  /** `want flag state`, e.g. `install ok installed`. */
  status: string;
  /** Its control paragraph (from the .deb being installed; undefined for one only named on the command line). */
  control?: string;
  file?: string;
  /** The installed package a .deb replaces. */
  old?: Package;
  depends: { type: 'depends' | 'pre-depends'; text: string; alternatives: string[] }[];
  provides: string[];
  conflicts: string[];
}

/** busybox's status hash table: packages by name in the slots its probing puts them, which `dpkg -l` walks. */
export class StatusTable {
  private readonly slots = new Map<number, Package>();

  slotOf(name: string): number {
    const { start, step } = hashOf(name, 8191);
    let at = start;
    while (this.slots.has(at) && this.slots.get(at)!.name !== name) {
      at -= step;
      if (at < 0) at += 8191;
    }
    return at;
  }

  get(name: string): Package | undefined {
    return this.slots.get(this.slotOf(name));
  }

  set(p: Package): void {
    this.slots.set(this.slotOf(p.name), p);
  }

  inOrder(): Package[] {
    return [...this.slots.entries()].sort(([a], [b]) => a - b).map(([, p]) => p);
  }
}

export const word = (status: string, n: number): string => status.split(/ +/)[n] ?? '';

export function setStatus(p: Package, value: string, position: 0 | 1 | 2): void {
  const words = [0, 1, 2].map((i) => word(p.status, i));
  words[position] = value;
  p.status = words.join(' ');
}

/** A package from a control paragraph (fill_package_struct): none without a Version. */
export function packageOf(control: string): Package | undefined {
  const f = fields(control);
  const get = (name: string): string | undefined => f.find(([n]) => n === name)?.[1];
  const name = get('Package');
  const version = get('Version');
  if (version === undefined || name === undefined) return undefined;
  const list = (v: string | undefined): string[] => (v ? v.split(',').map((s) => s.trim()) : []);
  const nameOnly = (s: string): string => s.replace(/\s*\(.*$/, '').trim();
  const depends: Package['depends'] = [];
  for (const [type, key] of [
    ['pre-depends', 'Pre-Depends'],
    ['depends', 'Depends'],
  ] as const)
    for (const text of list(get(key))) depends.push({ type, text, alternatives: text.split('|').map((s) => s.trim()) });
  return { name, version, status: '', depends, provides: list(get('Provides')).map(nameOnly), conflicts: list(get('Conflicts')) };
}

/** Debian's version order as busybox's version_compare has it. */
function compareVersions(a: string, b: string): number {
  const order = (c: string): number => (c === '~' ? -1 : c === '' || /\d/.test(c) ? 0 : /[A-Za-z]/.test(c) ? c.charCodeAt(0) : c.charCodeAt(0) + 256);
  const part = (val: string, ref: string): number => {
    let i = 0;
    let j = 0;
    while (i < val.length || j < ref.length) {
      while ((i < val.length && !/\d/.test(val[i]!)) || (j < ref.length && !/\d/.test(ref[j]!))) {
        const d = order(val[i] ?? '') - order(ref[j] ?? '');
        if (d) return d;
        i++;
        j++;
      }
      while (val[i] === '0') i++;
      while (ref[j] === '0') j++;
      let first = 0;
      while (/\d/.test(val[i] ?? '') && /\d/.test(ref[j] ?? '')) {
        if (!first) first = val.charCodeAt(i) - ref.charCodeAt(j);
        i++;
        j++;
      }
      if (/\d/.test(val[i] ?? '')) return 1;
      if (/\d/.test(ref[j] ?? '')) return -1;
      if (first) return first;
    }
    return 0;
  };
  const split = (v: string): [number, string, string] => {
    const colon = v.indexOf(':');
    const epoch = colon >= 0 ? parseInt(v, 10) || 0 : 0;
    const rest = colon >= 0 ? v.slice(colon + 1) : v;
    const dash = rest.lastIndexOf('-');
    return [epoch, dash >= 0 ? rest.slice(0, dash) : rest, dash >= 0 ? rest.slice(dash + 1) : ''];
  };
  const [ea, ua, da] = split(a);
  const [eb, ub, db] = split(b);
  if (ea !== eb) return ea - eb;
  return part(ua, ub) || part(da, db);
}

/** Whether `version` meets a dependency's `(op version)`, if it has one. */
function meets(version: string, dependency: string): boolean {
  const m = /\(\s*(<<|<=|=|>=|>>|<|>)\s*([^)\s]+)\s*\)/.exec(dependency);
  if (!m) return true;
  const c = compareVersions(version, m[2]!);
  return { '<<': c < 0, '<': c <= 0, '<=': c <= 0, '=': c === 0, '>=': c >= 0, '>': c >= 0, '>>': c > 0 }[m[1]!] ?? true;
}

/** A shell glob as fnmatch(3) reads it (`*`, `?`, `[...]`). */
export function fnmatch(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
    .replace(/\[!/g, '[^');
  try {
    return new RegExp(`^${re}$`, 's').test(name);
  } catch {
    return pattern === name;
  }
}

/** busybox's check_deps: conflicts of what is being installed, then every wanted package's dependencies. */
export function checkDeps(table: StatusTable, packages: Package[], debs: Package[]): void {
  const wanted = (name: string, dep: string, pre: boolean): boolean => {
    const candidates = packages.filter((q) => (q.name === name && meets(q.version, dep)) || q.provides.includes(name));
    return candidates.some((q) => {
      const s = table.get(q.name)?.status ?? '';
      return pre ? word(s, 2) === 'installed' : word(s, 0) === 'install';
    });
  };
  for (const deb of debs) {
    if (word(deb.status, 2) === 'installed') continue;
    for (const c of deb.conflicts) {
      const name = c.replace(/\s*\(.*$/, '');
      const other = table.get(name);
      if (other && word(other.status, 0) === 'install' && meets(deb.version, c)) throw new Died(`package ${deb.name} conflicts with ${name}`);
    }
  }
  for (const p of table.inOrder()) {
    if (word(p.status, 0) !== 'install') continue;
    for (const dep of p.depends) {
      const pre = dep.type === 'pre-depends';
      if (dep.alternatives.some((alt) => wanted(alt.replace(/\s*\(.*$/, ''), alt, pre))) continue;
      const what =
        dep.alternatives.length > 1
          ? `${dep.text}, which cannot be satisfied`
          : `${dep.text.replace(/\s*\(.*$/, '')}, which is not installed or flagged to be installed`;
      throw new Died(`package ${p.name} ${pre ? 'pre-' : ''}depends on ${what}`);
    }
  }
}

/**
 * The status file busybox's write_status_file writes: the known packages' paragraphs rewritten where
 * their status changed (a package's control paragraph, or only its Status line where the run had none,
 * as --configure's has not), the new packages' added.
 */
export function statusText(old: string, table: StatusTable, debs: Package[]): string {
  let out = '';
  let fieldStart = 0;
  const noStatus = (control: string | undefined): string =>
    fields(control ?? '')
      .filter(([n]) => n !== 'Status')
      .map(([n, v]) => `${n}: ${v}\n`)
      .join('');
  for (const chunk of paragraphs(old)) {
    const name = after(chunk, 'Package:');
    if (name === undefined) continue;
    const fromFile = after(chunk, 'Status:');
    const p = table.get(name);
    let written = false;
    if (p && fromFile !== p.status) {
      const state = word(p.status, 2);
      if (state === 'installed' || state === 'unpacked') {
        const deb = debs.find((d) => d.name === name);
        if (!deb) throw new Died(`ALERT: cannot find a control file, your status file may be broken, status may be incorrect for ${name}`);
        setStatus(p, 'ok', 1);
        out += `${noStatus(deb.control)}Status: ${p.status}\n\n`;
        written = true;
      } else if (state === 'not-installed') {
        out += `Package: ${name}\nStatus: ${p.status}\n`;
        // busybox carries its read position over from one paragraph to the next.
        for (const [n, v] of fields(chunk.slice(fieldStart))) if (n === 'Priority' || n === 'Section') out += `${n}: ${v}\n`;
        fieldStart = chunk.length;
        out += '\n';
        written = true;
      } else if (state === 'config-files') {
        for (const [n, v] of fields(chunk.slice(fieldStart))) out += n === 'Status' ? `Status: ${p.status}\n` : `${n}: ${v}\n`;
        fieldStart = chunk.length;
        out += '\n';
        written = true;
      }
    }
    if (!written) out += `${chunk}\n\n`;
  }
  for (const deb of debs) {
    const p = table.get(deb.name);
    if (p && word(p.status, 1) === 'reinstreq') {
      setStatus(p, 'ok', 1);
      out += `${noStatus(deb.control)}Status: ${p.status}\n\n`;
    }
  }
  return out;
}
