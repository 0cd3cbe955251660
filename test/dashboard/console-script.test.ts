import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { bundleConsoleScript, consoleScriptModule, consoleScriptModulePath } from '../../scripts/console-bundle.js';
import type * as Wire from '../../src/http/console/browser/console-wire.js';
import type { ConsoleHealth } from '../../src/http/console/console-health.js';
import type { ConsolePageView } from '../../src/http/console/console-page.js';
import { consoleScript } from '../../src/http/console/console-script.js';
import type { FleetPage } from '../../src/http/console/fleet-view.js';
import type { Incident, Plots } from '../../src/http/console/incident-story.js';
import type { AlertsView } from '../../src/notify/alert-board.js';
import type { Silence } from '../../src/silences/silences.js';

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

  it("reads the API's answers as the server types them (npm run typecheck fails otherwise)", () => {
    expectTypeOf<FleetPage>().toExtend<Wire.FleetPage>();
    expectTypeOf<Incident>().toExtend<Wire.Incident>();
    expectTypeOf<Plots>().toExtend<Wire.Plots>();
    expectTypeOf<ConsoleHealth>().toExtend<Wire.Health>();
    expectTypeOf<AlertsView>().toExtend<NonNullable<Wire.IncidentsAnswer['alerts']>>();
    expectTypeOf<Silence>().toExtend<Wire.Silence>();
    expectTypeOf<Pick<ConsolePageView, 'api' | 'writable' | 'identity' | 'signedIn'>>().toEqualTypeOf<Wire.ConsoleSettings>();
  });
});
