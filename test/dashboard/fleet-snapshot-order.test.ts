import { afterAll, expect, it } from 'vitest';
import { StateTracker, type TrackedStatus } from '../../src/events/state-tracker.js';
import { FleetView } from '../../src/http/console/fleet-view.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { clockPast } from '../support/wait.js';

/** The real tracker, whose next read (only the next) is held, after it read, until the test opens the gate. */
class HeldTracker extends StateTracker {
  gate?: Promise<void>;
  override async all(target: string): Promise<Map<string, TrackedStatus>> {
    const read = await super.all(target);
    const gate = this.gate;
    this.gate = undefined;
    await gate;
    return read;
  }
}

const redis = redisClient();
afterAll(() => redis.disconnect());

it('a background refresh that ends late does not put back a fleet older than a snapshot begun after it', async () => {
  const prefix = uniquePrefix('fleet-order');
  const keys = keySpace(prefix);
  const tracker = new HeldTracker(redis, keys);
  const status = (code: number) => redis.hset(keys.state('t'), 'default/web-1', JSON.stringify({ status: code, at: Date.now(), project: 'default' }));
  // Reused 200 ms; served up to 250 ms old while a fresh one is assembled behind.
  const view = new FleetView({
    redis,
    keys,
    prefix,
    tracker,
    silences: new Silences(redis, keys.silences),
    targets: [{ id: 't', name: 't' }],
    snapshotMaxAgeMs: 200,
    staleMaxAgeMs: 250,
  });
  const codeOf = async () => (await view.snapshot()).rows[0]!.statusCode;

  await status(103);
  const first = Date.now();
  expect(await codeOf()).toBe(103);
  // A refresh reads the fleet (Running) and is held before it ends.
  await clockPast(first + 150);
  let open!: () => void;
  tracker.gate = new Promise<void>((resolve) => (open = resolve));
  const refreshing = view.refresh();
  // The instance goes to Error; a read that finds the first snapshot too old to serve assembles a new one.
  await status(112);
  await clockPast(first + 260);
  expect(await codeOf()).toBe(112);
  // The held refresh ends now: its fleet is older than the one just served, and must not replace it.
  open();
  await refreshing;
  expect(await codeOf()).toBe(112);
});
