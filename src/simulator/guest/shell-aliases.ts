import type { Command } from 'just-bash';

/**
 * busybox ash's `alias` and `unalias`. The aliases live where the patched interpreter looks for
 * them when it expands a command's name: among the shell's variables under `\0alias:<name>`, a
 * name no variable can have, so that no expansion, listing or environment sees them (just-bash
 * kept them as variables `BASH_ALIAS_<name>`, which `${BASH_ALIAS_x}` expanded, where busybox has
 * no such variable). They are listed, quoted and refused as ash does: in the order of its alias
 * table (a hash of the name, then definition order), `name='value'` quoted by its `single_quote`,
 * `alias: x not found`.
 */
const prefix = '\0alias:';

/** ash's alias table has 39 chains; a name's chain is its first byte times 16 plus all its bytes. */
const chainOf = (name: string): number => {
  const bytes = Buffer.from(name, 'utf8');
  let hash = (bytes[0] ?? 0) << 4;
  for (const b of bytes) hash += b;
  return (hash >>> 0) % 39;
};

/** ash's single_quote: runs between quotes in '…', the quotes themselves in "…". */
export function singleQuote(text: string): string {
  let out = '';
  let rest = text;
  do {
    const end = rest.indexOf("'");
    const run = end === -1 ? rest : rest.slice(0, end);
    out += `'${run}'`;
    rest = rest.slice(run.length);
    if (!rest.startsWith("'")) break;
    const quotes = /^'+/.exec(rest)![0];
    out += `"${quotes}"`;
    rest = rest.slice(quotes.length);
  } while (rest);
  return out;
}

const line = (name: string, value: string): string => `${name}=${singleQuote(value)}\n`;

export function aliasCommands(): Command[] {
  const alias: Command = {
    name: 'alias',
    async execute(args, ctx) {
      if (args.length === 0) {
        const names = [...ctx.env.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
        const ordered = names.map((name, i) => ({ name, i, chain: chainOf(name) })).sort((a, b) => a.chain - b.chain || a.i - b.i);
        return { stdout: ordered.map(({ name }) => line(name, ctx.env.get(prefix + name)!)).join(''), stderr: '', exitCode: 0 };
      }
      let stdout = '';
      let stderr = '';
      let exitCode = 0;
      for (const arg of args) {
        const eq = arg.indexOf('=');
        if (eq > 0) {
          // Redefining keeps the alias's place in its chain, as ash's table does.
          ctx.env.set(prefix + arg.slice(0, eq), arg.slice(eq + 1));
          continue;
        }
        const value = ctx.env.get(prefix + arg);
        if (value === undefined) {
          stderr += `alias: ${arg} not found\n`;
          exitCode = 1;
        } else stdout += line(arg, value);
      }
      return { stdout, stderr, exitCode };
    },
  };
  const unalias: Command = {
    name: 'unalias',
    async execute(args, ctx) {
      if (args[0] === '-a') {
        for (const k of [...ctx.env.keys()]) if (k.startsWith(prefix)) ctx.env.delete(k);
        return { stdout: '', stderr: '', exitCode: 0 };
      }
      let stderr = '';
      for (const name of args) if (!ctx.env.delete(prefix + name)) stderr += `unalias: ${name} not found\n`;
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  return [alias, unalias];
}
