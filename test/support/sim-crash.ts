import type { InstanceRef, SimulatorControls } from '../../src/simulator/controls.js';
import { until } from './wait.js';

/**
 * Crashes a simulated instance (kill -9) and waits until the crash's stop hook has let go of it.
 * Until then the instance is busy with "stop" and refuses a delete or a start; the hook publishes
 * the instance's `instance-shutdown` as it releases the lock, and that frame is the only sign of it
 * (the crash itself publishes nothing). A test that acts on the instance right after a crash uses
 * this; one that waits for Reflex to heal the crash does not need it.
 */
export async function crashThroughStopHook(controls: SimulatorControls, name: string, ref: InstanceRef = {}): Promise<void> {
  const published = controls.eventsPublished;
  controls.crash(name, ref);
  await until(`the stop hook of ${name}'s crash`, () => controls.eventsPublished > published, 10_000, 5);
}
