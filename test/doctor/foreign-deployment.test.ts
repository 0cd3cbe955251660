import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { checkReadiness } from '../../src/doctor/health-checks.js';
import { freePort } from '../support/free-port.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';

/**
 * `reflex doctor` reads the /readyz of the address its configuration names, and reports it only
 * when the Reflex answering there is of its own deployment (the same Redis and prefix): two
 * deployments on one host share nothing but the loopback, and a doctor pointed at the other's port
 * says so instead of reporting the other's readiness as its own, then reads its own deployment's
 * /readyz where its replicas announced they serve.
 */
describe('reflex doctor beside two deployments on different prefixes', () => {
  let a: Stack;
  let b: Stack;

  beforeAll(async () => {
    a = await startStack({ redisUrl: redisUrl(), label: 'doctor-a', config: { httpPort: await freePort() } });
    b = await startStack({ redisUrl: redisUrl(), label: 'doctor-b', config: { httpPort: await freePort() } });
  });

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  const doctorOf = (prefix: string, httpPort: number) => parseConfig({ redisUrl: redisUrl(), prefix, httpPort, target: 'unix:///nonexistent.sock' });

  it('reports the readiness of its own deployment', async () => {
    for (const own of [a, b]) {
      const config = doctorOf(own.prefix, own.reflex.http!.port);
      await until('ready', async () => (await checkReadiness(config)).every((c) => c.ok && !c.warning), 10_000);
      expect(await checkReadiness(config)).toEqual([
        { name: 'readyz', ok: true, detail: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${own.reflex.http!.port}/readyz: ready \\(`)) },
      ]);
    }
  });

  it("never reports the other deployment's readiness: it says the endpoint is another deployment's", async () => {
    const [check, ...more] = await checkReadiness(doctorOf(a.prefix, b.reflex.http!.port));
    // Its own deployment's /readyz instead, where its replica announced it serves.
    expect(more).toEqual([
      { name: 'readyz', ok: true, detail: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${a.reflex.http!.port}/readyz: ready \\(`)) },
    ]);
    expect(check).toMatchObject({
      name: 'readyz',
      ok: true,
      warning: true,
      detail: expect.stringMatching(
        /^the Reflex at \S+ belongs to another deployment \(another Redis, or another prefix than doctor-a-\S+\): its readiness is not reported/,
      ),
    });
    expect(check!.detail).not.toMatch(/: ready/);

    // Nothing ever ran with the doctor's prefix: the answer cannot be its deployment's either, and no replica of it serves anywhere.
    const [fresh, ...none] = await checkReadiness(doctorOf(uniquePrefix('doctor-none'), a.reflex.http!.port));
    expect(none).toEqual([]);
    expect(fresh).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringMatching(/belongs to another deployment: no Reflex has run on this Redis with prefix/),
    });
  });

  it('finds its own deployment where it serves when nothing answers at the configured address', async () => {
    const [silent, ...own] = await checkReadiness(doctorOf(b.prefix, await freePort()));
    expect(silent).toMatchObject({ name: 'readyz', ok: true, warning: true, detail: expect.stringMatching(/^no Reflex answers at /) });
    expect(own).toEqual([
      { name: 'readyz', ok: true, detail: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${b.reflex.http!.port}/readyz: ready \\(`)) },
    ]);
  });
});
