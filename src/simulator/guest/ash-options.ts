/**
 * busybox 1.35 ash's options, as its `set` and the `sh` command line take them (recorded on the LXD
 * 5.0.2 and Incus 6.0 beds): the letters `set -X` takes and the option each sets, and the names
 * `set -o` lists, in its order. `-i`, `-s`, `-c` and `-l` are the command line's alone (`set -i` is
 * an illegal option); `-m` is taken and stays off without a terminal.
 */
export const ashOptionLetters: Readonly<Record<string, string>> = {
  e: 'errexit',
  f: 'noglob',
  I: 'ignoreeof',
  m: 'monitor',
  n: 'noexec',
  x: 'xtrace',
  v: 'verbose',
  C: 'noclobber',
  a: 'allexport',
  b: 'notify',
  u: 'nounset',
  E: 'errtrace',
};

/** The names `set -o NAME` takes, in the order `set -o` lists them. */
export const ashOptionNames: readonly string[] = [
  'errexit',
  'noglob',
  'ignoreeof',
  'monitor',
  'noexec',
  'xtrace',
  'verbose',
  'noclobber',
  'allexport',
  'notify',
  'nounset',
  'errtrace',
  'vi',
  'pipefail',
];

/**
 * Options ash takes and leaves off here: `monitor` (job control needs a terminal the simulator's
 * shells do not control) and `vi` (line editing of an interactive shell).
 */
export const ashOptionsLeftOff: ReadonlySet<string> = new Set(['monitor', 'vi']);

// The `set` builtin lives in just-bash's bundle, which reads this table by this name (patches/README.md 74).
(globalThis as Record<symbol, unknown>)[Symbol.for('reflex.ashOptions')] = {
  letters: ashOptionLetters,
  names: ashOptionNames,
  leftOff: ashOptionsLeftOff,
};
