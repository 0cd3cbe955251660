import { StatusCode, defineRule } from 'reflex-lxd';

/**
 * 03 — Hold on repeated Error. The first Error (112) within an hour gets a forced restart (the
 * `start` action force-stops an instance in Error first); a repeated Error is not restarted again:
 * the instance is held as it is (quarantined, one alert) for a person to look at.
 *
 * The catalogue asked for "freeze" here; LXD cannot freeze an instance in Error (freezing needs a
 * running guest), so holding it untouched is the closest safe action.
 */
export default defineRule({
  name: 'example-hold-on-repeated-error',
  on: { kind: 'instance.status', to: [StatusCode.Error] },
  scope: { filter: 'config.user.reflex.on-error eq restart-once' },
  actions: [{ action: 'start' }],
  crashLoop: { maxRestarts: 1, windowMs: 3_600_000, initialBackoffMs: 0, quarantineMs: 3_600_000 },
});
