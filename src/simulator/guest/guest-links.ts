/**
 * The names of the guest's files that have more than one (hard links): each such path maps to the
 * set of all its names, one set shared by them. A path not listed has one name. Paths are the
 * physical ones (no symlink among their directories).
 */
export class HardLinks {
  private readonly names = new Map<string, Set<string>>();

  /** How many names the file at `path` has (its link count). */
  count(path: string): number {
    return this.names.get(path)?.size ?? 1;
  }

  /** The other names of the file at `path` (none when it has one). */
  others(path: string): string[] {
    const group = this.names.get(path);
    return group ? [...group].filter((p) => p !== path) : [];
  }

  /** Whether any file has more than one name. */
  get empty(): boolean {
    return this.names.size === 0;
  }

  /** `name` is now one more name of the file at `existing` (link(2)). */
  add(existing: string, name: string): void {
    const group = this.names.get(existing) ?? new Set([existing]);
    group.add(name);
    this.names.set(existing, group);
    this.names.set(name, group);
  }

  /** `path`, and every path under it, is no longer a name (unlink(2), rmdir(2), a rename over it). */
  drop(path: string): void {
    if (this.names.size === 0) return;
    for (const p of [...this.names.keys()]) {
      if (p !== path && !p.startsWith(`${path}/`)) continue;
      const group = this.names.get(p)!;
      group.delete(p);
      this.names.delete(p);
      if (group.size === 1) this.names.delete([...group][0]!);
    }
  }

  /** What was named under `src` is named under `dest` (rename(2)); what `dest` named before loses that name. */
  move(src: string, dest: string): void {
    if (this.names.size === 0 || src === dest) return;
    this.drop(dest);
    for (const p of [...this.names.keys()]) {
      if (p !== src && !p.startsWith(`${src}/`)) continue;
      const group = this.names.get(p)!;
      const renamed = dest + p.slice(src.length);
      group.delete(p);
      group.add(renamed);
      this.names.delete(p);
      this.names.set(renamed, group);
    }
  }

  /** Every group of names, each once (what a copy of the filesystem links again). */
  groups(): string[][] {
    return [...new Set(this.names.values())].map((g) => [...g]);
  }
}
