import { createConnection, createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runReflex } from '../support/reflex-process.js';

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

describe("the demo, the README's first command", () => {
  it("heals the simulated fleet, leaves users' stops alone, quarantines a crash loop, and exits leaving nothing running", async () => {
    // The default metrics port held, as by a `reflex run` on the same host: the demo picks its own ports.
    const held = await holdPort(9464);
    const started = Date.now();
    const res = await runReflex(['demo', '--duration', '35s'], { REDIS_URL: '' }).finally(() => held?.close());
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(/^\{/m);
    expect(res.stdout).toMatch(/metrics at http:\/\/127\.0\.0\.1:(?!9464\/)\d+\/metrics/);
    expect(Date.now() - started).toBeLessThan(60_000);
    const out = res.stdout;
    expect(out).toMatch(/OUTCOME\s+web-1\s+restart-on-crash: start: started \(was Stopped\)/);
    expect(out).toMatch(/OUTCOME\s+db-1\s+restart-on-crash: start: started \(was Error\)/);
    expect(out).toMatch(/left alone:\s+web-3 \(stopped by a user\), batch-1 \(not opted in\)/);
    expect(out).toMatch(/quarantined: web-2/);
    // One quarantine alert; each crash of the loop has its own incident alert besides (audited, then resolved by the restart).
    expect(out.match(/ALERT\s+web-2\s+.*crash-looping/g)).toHaveLength(1);
    // The example receiver (signed webhook, signature checked) gets each crash firing, then resolved with the operation.
    expect(out).toMatch(/RECEIVED\s+web-1\s+chat: \[firing\] instance\.crashed \(warning\) web-1 stopped without a request/);
    expect(out).toMatch(
      /RECEIVED\s+web-1\s+chat: \[resolved\] instance\.crashed .*started by Reflex; Reflex: start done \(operation [0-9a-f]{8}\); restarted/,
    );
    expect(out).toMatch(/RECEIVED\s+web-2\s+chat: \[firing\] instance\.crash-loop \(critical\)/);
    expect(out).not.toMatch(/refused: signature/);
    const port = Number(/private at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await refused(port), 'the private redis-server is gone').toBe(true);
  }, 90_000);

  it('without Redis says how to get one, in one line, and exits 4', async () => {
    // No redis-server on the PATH and no REDIS_URL: nothing to start a private one with.
    const none = await runReflex(['demo', '--duration', '5s'], { REDIS_URL: '', PATH: '/nonexistent' });
    expect(none.code).toBe(4);
    expect(none.stderr).toBe(
      'reflex: No Redis available: set REDIS_URL=redis://host:port, or install redis-server (Debian: apt-get install redis-server) so a private one can be started.\n',
    );
    // A Redis that does not answer: the same exit code, nothing left running (the process ends).
    const unreachable = await runReflex(['demo', '--duration', '5s', '--redis', 'redis://127.0.0.1:1']);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toMatch(/^reflex: cannot reach Redis at redis:\/\/127\.0\.0\.1:1[^\n]*\n$/);
  }, 60_000);
});

/** Listens on `port` of 127.0.0.1; undefined when something else holds it already. */
function holdPort(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}
