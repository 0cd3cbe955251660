import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleConsoleScript, consoleScriptModule, consoleScriptModulePath } from '../../scripts/console-bundle.js';
import { consoleScript } from '../../src/http/console/console-script.js';

describe("the console's browser script", () => {
  it('is checked in as the bundle of its typed sources (after editing src/http/console/browser/, run npm run build:console)', async () => {
    const bundled = await bundleConsoleScript();
    expect(readFileSync(consoleScriptModulePath, 'utf8'), `${consoleScriptModulePath} is stale: npm run build:console`).toBe(
      consoleScriptModule(bundled),
    );
    expect(consoleScript).toBe(bundled);
  });

  it('can be inlined into the page: no end of a script element, one self-contained function', () => {
    expect(consoleScript).not.toMatch(/<\/script/i);
    expect(consoleScript).not.toMatch(/^\s*(import|export)\s/m);
    expect(consoleScript.trim()).toMatch(/^"use strict";\n\(\(\) => \{[\s\S]*\}\)\(\);$/);
  });
});
