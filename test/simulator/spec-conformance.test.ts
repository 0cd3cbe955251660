import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

/**
 * Responses validate against the Swagger 2.0 definitions of the published API description
 * (subset copied to test/fixtures/simulator/spec-definitions.json). The spec declares no required
 * fields, so the test adds LXD 5.0.2's field lists as `required` and forbids fields the spec does
 * not know. Go maps and slices may be null on the wire, so object/array types also admit null.
 */
const spec = JSON.parse(readFileSync(fileURLToPath(new URL('../fixtures/simulator/spec-definitions.json', import.meta.url)), 'utf8')) as {
  definitions: Record<string, any>;
};

const required: Record<string, string[]> = {
  Instance: [
    'architecture',
    'config',
    'created_at',
    'description',
    'devices',
    'ephemeral',
    'expanded_config',
    'expanded_devices',
    'last_used_at',
    'location',
    'name',
    'profiles',
    'project',
    'stateful',
    'status',
    'status_code',
    'type',
  ],
  InstanceFull: ['backups', 'snapshots', 'state', 'name', 'status_code'],
  InstanceState: ['cpu', 'disk', 'memory', 'network', 'pid', 'processes', 'status', 'status_code'],
  InstanceSnapshot: ['architecture', 'config', 'created_at', 'devices', 'ephemeral', 'expires_at', 'name', 'profiles', 'stateful'],
  Operation: [
    'class',
    'created_at',
    'description',
    'err',
    'id',
    'location',
    'may_cancel',
    'metadata',
    'resources',
    'status',
    'status_code',
    'updated_at',
  ],
  Image: ['aliases', 'architecture', 'fingerprint', 'properties', 'type', 'created_at'],
  StorageVolume: ['config', 'name', 'type', 'used_by', 'location', 'content_type', 'project'],
  Event: ['type', 'timestamp', 'metadata', 'location'],
  Server: ['api_extensions', 'api_status', 'api_version', 'auth', 'public', 'config', 'environment'],
  ServerUntrusted: ['api_extensions', 'api_status', 'api_version', 'auth', 'public'],
  Certificate: ['name', 'type', 'fingerprint', 'certificate'],
};

function nullable(schema: any): any {
  if (Array.isArray(schema)) return schema.map(nullable);
  if (!schema || typeof schema !== 'object') return schema;
  const out: any = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k.startsWith('x-') || k === 'example' || k === 'title') continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, nullable(s)])) : nullable(v);
  }
  if (out.type === 'object' || out.type === 'array') out.type = [out.type, 'null'];
  if (out.$ref) return { anyOf: [{ $ref: out.$ref }, { type: 'null' }] };
  return out;
}

const definitions: Record<string, any> = {};
for (const [name, def] of Object.entries(spec.definitions)) {
  const d = nullable(def);
  if (required[name]) {
    d.required = required[name];
    d.additionalProperties = false;
  }
  definitions[name] = d;
}
const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => void;
addFormats(ajv);
ajv.addSchema({ $id: 'spec', definitions });
const validator = (name: string): ValidateFunction => ajv.getSchema(`spec#/definitions/${name}`)!;

function expectValid(name: string, value: unknown): void {
  const validate = validator(name);
  const ok = validate(value);
  expect(ok ? [] : validate.errors, `${name}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}

/** Validates every item of a listing, after checking there is one: an empty listing validates nothing. */
function expectEachValid(name: string, items: unknown[]): void {
  expect(items.length, `${name}: the listing is empty, so nothing would be checked`).toBeGreaterThan(0);
  for (const item of items) expectValid(name, item);
}

let t: TestSim;
beforeAll(async () => {
  t = await startTestSim({ instances: 2, revision: 'later' });
  t.sim.controls.addInstance({ name: 'stopped1', status: 'Stopped' });
  await t.waitOp(await t.api('POST', '/1.0/instances/inst-00001/snapshots', { name: 's1' }));
});
afterAll(async () => t.close());

describe('responses validate against the API description', () => {
  it('rejects objects that break the schema (the validator has teeth)', () => {
    expect(validator('Instance')({ name: 'x' })).toBe(false);
    expect(validator('Operation')({ ...{ id: 'x' }, status_code: 'Running' })).toBe(false);
    expect(
      validator('InstanceState')({
        status: 'Running',
        status_code: 103,
        pid: 1,
        processes: 1,
        cpu: {},
        disk: {},
        memory: {},
        network: null,
        bogus: 1,
      }),
    ).toBe(false);
  });

  it('instances at recursion 1 and 2, single instance, state of running and stopped instances', async () => {
    expectEachValid('Instance', (await t.api('GET', '/1.0/instances?recursion=1')).body.metadata);
    expectEachValid('InstanceFull', (await t.api('GET', '/1.0/instances?recursion=2')).body.metadata);
    expectValid('Instance', (await t.api('GET', '/1.0/instances/inst-00001')).body.metadata);
    expectValid('InstanceState', (await t.api('GET', '/1.0/instances/inst-00001/state')).body.metadata);
    expectValid('InstanceState', (await t.api('GET', '/1.0/instances/stopped1/state')).body.metadata);
  });

  it('snapshots', async () => {
    expectEachValid('InstanceSnapshot', (await t.api('GET', '/1.0/instances/inst-00001/snapshots?recursion=1')).body.metadata);
    expectValid('InstanceSnapshot', (await t.api('GET', '/1.0/instances/inst-00001/snapshots/s1')).body.metadata);
  });

  it('operations in the async envelope, by GET, in the listing and on the events socket', async () => {
    const tap = await t.events();
    const res = await t.api('PUT', '/1.0/instances/inst-00002/state', { action: 'freeze' });
    expectValid('Operation', res.body.metadata);
    expectValid('Operation', (await t.api('GET', res.body.operation)).body.metadata);
    await t.waitOp(res);
    expectEachValid('Operation', Object.values((await t.api('GET', '/1.0/operations?recursion=1')).body.metadata).flat());
    await tap.until((f) => f.type === 'operation' && f.metadata.id === res.body.metadata.id && f.metadata.status_code === 200);
    expect(tap.frames.length).toBeGreaterThan(2);
    expectEachValid('Event', tap.frames);
    expectEachValid(
      'Operation',
      tap.frames.filter((f) => f.type === 'operation').map((f) => f.metadata),
    );
  });

  it('images, storage volumes, server and certificates', async () => {
    expectEachValid('Image', (await t.api('GET', '/1.0/images?recursion=1')).body.metadata);
    expectEachValid('StorageVolume', (await t.api('GET', '/1.0/storage-pools/default/volumes?recursion=1')).body.metadata);
    expectValid('Server', (await t.api('GET', '/1.0')).body.metadata);
    expect((await t.api('GET', '/1.0/certificates?recursion=1')).body.metadata).toEqual([]);
  });
});
