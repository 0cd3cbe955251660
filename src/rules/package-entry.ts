import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The name rule files import from (`import { defineRule } from 'reflex-lxd'`). */
export const packageName = 'reflex-lxd';

const here = fileURLToPath(import.meta.url);
/** `.ts` when running from the source (the checkout, tests), `.js` when compiled (dist/, an installation). */
const ext = extname(here);

/** Whether this is running from the sources (the checkout's tests, through tsx or vitest), not compiled. */
export const fromSources = ext === '.ts';

/**
 * The public entry of the running installation, wherever the rules folder is: rule files are
 * compiled with `reflex-lxd` resolved to this file, and type-checked against {@link packageTypes}.
 * src/rules/package-entry.ts → src/index.ts; dist/rules/package-entry.js → dist/index.js.
 */
export const packageEntry = join(dirname(dirname(here)), `index${ext}`);

/** The root of the running installation (the checkout, or the installed package's folder). */
export const packageRoot = dirname(dirname(dirname(here)));

/** The declarations rule files are type-checked against: src/index.ts, or dist/index.d.ts once compiled. */
export const packageTypes = ext === '.ts' ? packageEntry : join(dirname(dirname(here)), 'index.d.ts');

/** The folder holding `@types/node` as the running installation resolves it (nested in a global install, hoisted in a project). */
export function nodeTypesRoot(): string | undefined {
  try {
    return dirname(dirname(createRequire(import.meta.url).resolve('@types/node/package.json')));
  } catch {
    return undefined;
  }
}
