import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeTypesRoot, packageName, packageRoot, packageTypes } from './package-entry.js';

/**
 * `reflex rules init DIR`: makes DIR a rules folder an editor understands, wherever it is — a
 * tsconfig.json that resolves `reflex-lxd` to the running installation's declarations (as
 * `reflex rules check` does), and the bundled restart-on-crash rule as an example. Files that
 * exist are left alone. Returns what it did, a line each.
 */
export function initRulesFolder(dir: string): string[] {
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true });
  const done: string[] = [];
  const put = (name: string, write: (path: string) => void) => {
    const path = join(abs, name);
    if (existsSync(path)) return done.push(`kept ${path} (exists)`);
    write(path);
    done.push(`wrote ${path}`);
  };
  const typeRoot = nodeTypesRoot();
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      ...(typeRoot ? { typeRoots: [typeRoot] } : {}),
      // The installation this folder was made with; `reflex rules init` again after moving it.
      paths: { [packageName]: [packageTypes] },
    },
    include: ['*.ts'],
  };
  put('tsconfig.json', (p) => writeFileSync(p, `${JSON.stringify(tsconfig, null, 2)}\n`));
  put('restart-on-crash.ts', (p) => copyFileSync(join(packageRoot, 'rules', 'restart-on-crash.ts'), p));
  done.push(`next: reflex rules check ${dir} && reflex run --rules ${dir}`);
  return done;
}
