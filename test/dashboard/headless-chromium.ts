import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** The system Chromium the browser tests drive (REFLEX_CHROMIUM, or /usr/bin/chromium as CI installs it). */
const chromiumPath = process.env.REFLEX_CHROMIUM ?? '/usr/bin/chromium';

/** Fails the test with how to get a Chromium when there is none. */
export function requireChromium(): void {
  if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (CI does), or set REFLEX_CHROMIUM`);
}

/**
 * Launches the system Chromium headless. It must try no background connection (the CI network
 * refuses them); Playwright gives each launch a fresh profile of its own (--user-data-dir in a
 * temporary folder).
 */
export async function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
