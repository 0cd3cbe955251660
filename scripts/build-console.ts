import { writeFileSync } from 'node:fs';
import { bundleConsoleScript, consoleScriptModule, consoleScriptModulePath } from './console-bundle.js';

writeFileSync(new URL(`../${consoleScriptModulePath}`, import.meta.url), consoleScriptModule(await bundleConsoleScript()));
process.stdout.write(`${consoleScriptModulePath} written\n`);
