import { AsyncLocalStorage } from 'node:async_hooks';
import { posix } from 'node:path';

/**
 * Where one of a process's standard descriptors leads, as open(2) of `/proc/self/fd/N` finds it
 * (`/dev/stdin`, `/dev/stdout`, `/dev/stderr` and `/dev/fd` are symlinks there, as LXC makes them):
 *
 * - `host`: the exec's own stream, a pipe the daemon made on the host (`prw-------`, owned by the
 *   host's root, 65534 in the container), which the container's root may not open again (EACCES:
 *   its capabilities do not reach an unmapped owner);
 * - `pipe`: a pipe made in the container (a pipeline, a here-document, a command substitution) or
 *   the exec's terminal: opening it again reads what the process would read, writes where it writes;
 * - `file`: a file a redirection opened: opening it again opens that file;
 * - `closed`: no descriptor (`<&-`): ENOENT.
 */
export type Stream = { kind: 'host' } | { kind: 'pipe'; read: () => string; written: string[] } | { kind: 'file'; path: string } | { kind: 'closed' };

/** A process's descriptors 0, 1 and 2. */
export type Streams = readonly [Stream, Stream, Stream];

/** The descriptor nodes: `/proc/self/fd/0` to `2`, where the symlinks of /dev lead. */
export const descriptorNodes = ['/proc/self/fd/0', '/proc/self/fd/1', '/proc/self/fd/2'] as const;

/** /dev's symlinks into `/proc/self/fd`, as LXC makes them in a container's /dev. */
export const descriptorLinks: readonly (readonly [link: string, target: string])[] = [
  ['/dev/fd', '/proc/self/fd'],
  ['/dev/stdin', '/proc/self/fd/0'],
  ['/dev/stdout', '/proc/self/fd/1'],
  ['/dev/stderr', '/proc/self/fd/2'],
];

/** The descriptor a physical path is the node of (`/proc/self/fd/1`: 1), if it is one. */
export function descriptorAt(path: string): 0 | 1 | 2 | undefined {
  const at = descriptorNodes.indexOf(posix.normalize(path) as (typeof descriptorNodes)[number]);
  return at < 0 ? undefined : (at as 0 | 1 | 2);
}

/** Whether a path as given may lead to a descriptor node: its last name is one a symlink or node of them has (a cheap test before resolving it). */
export const mayBeDescriptor = (path: string): boolean => /(?:^|\/)(?:std(?:in|out|err)|[012])\/?$/.test(path);

/** What the shell tells a program of its descriptors (the patched just-bash's `jbFds`, patches/README.md 109). */
interface ShellDescriptors {
  /** The exec's streams are the host's pipes (an exec without a terminal). */
  jbHost?: boolean;
  /** Where fd 0 comes from, when not the shell's own stdin: a pipe, a file a redirection opened, or closed. */
  jbIn?: 'pipe' | 'closed' | { path: string };
  /** fd 1 is not the shell's own stdout (a pipe, a substitution, a redirection); `last`: the last command of a pipeline, whose fd 1 is the shell's. */
  jbInPipe?: boolean | 'last';
  /** fd 2 is redirected; `out`: to a copy of the exec's own stdout (`2>&1`), the host's pipe too. */
  jbErrRedir?: boolean | 'out';
  fileDescriptors?: Map<number, { kind?: string; path?: string; jbTop?: boolean; jbErr?: boolean }>;
}

/**
 * A program's descriptors from what its shell tells it: fd 0 from where its stdin comes
 * (`stdin` reads it, only when a program opens it again), fds 1 and 2 the exec's own streams unless
 * a pipe or a redirection took them.
 */
export function streamsOf(fds: ShellDescriptors | undefined, stdin: () => string): Streams {
  const host = fds?.jbHost === true;
  const own = (): Stream => (host ? { kind: 'host' } : { kind: 'pipe', read: stdin, written: [] });
  const input: Stream =
    fds?.jbIn === undefined
      ? own()
      : fds.jbIn === 'closed'
        ? { kind: 'closed' }
        : fds.jbIn === 'pipe'
          ? { kind: 'pipe', read: stdin, written: [] }
          : { kind: 'file', path: fds.jbIn.path };
  const output = (fd: 1 | 2, moved: boolean | 'out' | undefined): Stream => {
    if (moved === 'out') return own();
    const entry = fds?.fileDescriptors?.get(fd);
    if (!moved && (!entry || entry.jbTop === true || entry.jbErr === true)) return own();
    return { kind: 'pipe', read: () => '', written: [] };
  };
  return [input, output(1, fds?.jbInPipe === true), output(2, fds?.jbErrRedir)];
}

const running = new AsyncLocalStorage<Streams>();

/** Runs a program with its descriptors: what it opens of `/proc/self/fd` (and /dev's links there) is them. */
export function withStreams<T>(streams: Streams, fn: () => Promise<T>): Promise<T> {
  return running.run(streams, fn);
}

/**
 * The descriptor `fd` of the process running now; outside a program (the shell's own reads), the
 * exec's stream: the host's pipe without a terminal, the terminal (nothing to read) with one.
 */
export function streamNow(fd: 0 | 1 | 2, terminal: boolean): Stream {
  return running.getStore()?.[fd] ?? (terminal ? { kind: 'pipe', read: () => '', written: [] } : { kind: 'host' });
}

/** What a program wrote through `/dev/stdout` or `/dev/stderr` (and their kin) to the streams it writes anyway. */
export function writtenThrough(streams: Streams): { stdout: string; stderr: string } {
  const of = (s: Stream): string => (s.kind === 'pipe' ? s.written.join('') : '');
  return { stdout: of(streams[1]), stderr: of(streams[2]) };
}
