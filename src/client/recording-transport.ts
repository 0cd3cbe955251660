import { ActingTransport, dryRunWatch } from './acting-transport.js';
import type { Target } from './target.js';
import { Transport } from './transport.js';

/** A mutating request a dry-run wanted to send. */
export interface RecordedCall {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * A transport for the CLI's dry-runs and replays: reads (GET) go to the server, every other
 * request is recorded and refused without being sent (the executor's dry-run, {@link dryRunWatch}),
 * so nothing can change on the server.
 */
export class RecordingTransport extends ActingTransport {
  readonly recorded: RecordedCall[];

  constructor(target: Target) {
    const recorded: RecordedCall[] = [];
    super(
      new Transport(target),
      dryRunWatch((req) => void recorded.push(req)),
      true,
    );
    this.recorded = recorded;
  }
}
