import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { decodeFrame } from '../../src/events/frame.js';
import { frameId } from '../../src/events/normalize.js';
import { silent } from '../support.js';
import { until } from '../../test/support/wait.js';
import type { WitnessedFrame } from './checker.js';

/**
 * An independent reader of the daemon's lifecycle stream: every frame it sees, with the id Reflex
 * gives it and the instance it names, is what must appear in the audit trail.
 */
export class LifecycleWitness {
  readonly frames: WitnessedFrame[] = [];
  private readonly client: InstanceClient;
  private readonly sub: EventSubscriber;

  constructor(target: string) {
    this.client = new InstanceClient(parseTarget(target));
    this.sub = new EventSubscriber({
      endpoint: () => this.client.eventsEndpoint(['lifecycle'], { allProjects: true }),
      onFrame: (raw) => {
        const d = decodeFrame(raw);
        if (!d.ok || d.frame.type !== 'lifecycle') return;
        const meta = d.frame.metadata as { action?: unknown; source?: unknown };
        const source = typeof meta.source === 'string' ? meta.source.split('?')[0]! : '';
        this.frames.push({
          id: frameId(target, d.frame),
          name: source.slice(source.lastIndexOf('/') + 1),
          action: String(meta.action),
          at: Date.now(),
        });
      },
      logger: silent,
    });
  }

  get connected(): boolean {
    return this.sub.connected;
  }

  async start(): Promise<void> {
    this.sub.start();
    await until('the witness to connect', () => this.sub.connected, 10_000, 20);
  }

  /** The frames about instances whose names start with `prefix`. */
  about(prefix: string): WitnessedFrame[] {
    return this.frames.filter((f) => f.name.startsWith(prefix));
  }

  /** Forgets the frames seen so far (between histories). */
  forget(): void {
    this.frames.length = 0;
  }

  async stop(): Promise<void> {
    await this.sub.stop();
    await this.client.close();
  }
}
