import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceClient } from '../../src/client/client.js';
import { defineProbe } from '../../src/probes/probe.js';
import { addressOf, httpUrl, runCheck } from '../../src/probes/probe-check.js';

/** http and tcp checks need no daemon: a local server plays the instance's service. */
describe('http and tcp probe checks', () => {
  let server: Server;
  let port: number;
  const noClient = undefined as unknown as InstanceClient;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/hang') return; // never answers
      res.statusCode = req.url === '/ok' ? 200 : req.url === '/moved' ? 302 : 503;
      res.end(req.url === '/ok' ? 'fine' : 'overloaded');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  // A generous timeout where the service answers (a loaded machine is slow), a short one where it hangs.
  const http = (url: string, timeoutMs = 20_000) => defineProbe({ name: 'h', kind: 'http', url, port, timeoutMs });

  it('2xx and 3xx are successes, another status a failure with its status in the output', async () => {
    expect(await runCheck(http('/ok'), noClient, 'c1', '127.0.0.1')).toMatchObject({
      outcome: 'success',
      output: expect.stringMatching(/: 200 fine$/),
    });
    expect((await runCheck(http('/moved'), noClient, 'c1', '127.0.0.1')).outcome).toBe('success');
    expect(await runCheck(http('/busy'), noClient, 'c1', '127.0.0.1')).toMatchObject({
      outcome: 'failure',
      output: expect.stringMatching(/503 overloaded/),
    });
  });

  it('a service that does not answer within the timeout fails; an instance without an address is unknown', async () => {
    expect(await runCheck(http('/hang', 300), noClient, 'c1', '127.0.0.1')).toMatchObject({
      outcome: 'failure',
      output: expect.stringMatching(/no answer within 300 ms/),
    });
    expect((await runCheck(http('/ok'), noClient, 'c1', undefined)).outcome).toBe('unknown');
  });

  it('tcp: a listening port succeeds, a closed one fails', async () => {
    expect((await runCheck(defineProbe({ name: 't', kind: 'tcp', port, timeoutMs: 20_000 }), noClient, 'c1', '127.0.0.1')).outcome).toBe('success');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect((await runCheck(defineProbe({ name: 't', kind: 'tcp', port: closedPort, timeoutMs: 20_000 }), noClient, 'c1', '127.0.0.1')).outcome).toBe(
      'failure',
    );
  });

  it("the instance's address is its first global IPv4 outside lo; an http url is a path on it or a URL of its own", () => {
    const state = {
      network: {
        lo: { addresses: [{ family: 'inet', address: '127.0.0.1', scope: 'local' }] },
        eth0: {
          addresses: [
            { family: 'inet6', address: 'fe80::1', scope: 'link' },
            { family: 'inet6', address: 'fd42::5', scope: 'global' },
            { family: 'inet', address: '10.0.3.5', scope: 'global' },
          ],
        },
      },
    };
    expect(addressOf(state)).toBe('10.0.3.5');
    expect(addressOf({ network: { eth0: { addresses: [{ family: 'inet6', address: 'fd42::5', scope: 'global' }] } } })).toBe('fd42::5');
    expect(addressOf({})).toBeUndefined();
    expect(httpUrl({ url: '/healthz', port: 8080 }, 'fd42::5')).toBe('http://[fd42::5]:8080/healthz');
    expect(httpUrl({ url: 'http://lb.example/x' }, '10.0.3.5')).toBe('http://lb.example/x');
  });
});
