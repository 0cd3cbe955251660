#!/usr/bin/env node
// The `reflex` command: runs the compiled CLI (dist/, made by `npm run build`; `npm ci` and
// `npm pack` build it through the prepare/prepack scripts).
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+ keeps the compiled code of the ~400 modules a command loads (under the OS temp
// folder, checked against each file's content), so the next command starts in a fraction of the
// time; older Node has no such cache and starts as before.
module.enableCompileCache?.();

const entry = new URL('../dist/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(`reflex: ${entry.pathname} is missing: this checkout is not built; run \`npm run build\`\n`);
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
