import type { InstanceClient } from '../../client/client.js';
import type { OperationObject } from '../../client/envelope.js';
import { isFinalOperationCode, StatusCode } from '../../client/status-code.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { stateChangeOf } from '../../events/intent.js';

/** Seconds a stop that gives a start back waits for a clean shutdown before it is forced. */
export const GIVE_BACK_STOP_TIMEOUT_S = 30;

/**
 * Gives back a start of Reflex's that an operator's stop or freeze met in flight, the daemon having
 * refused it: does what the operator asked, through the action's own client (fenced, marked as
 * Reflex's, audited). A stop asks for a clean shutdown first, as `lxc stop` does, and is forced
 * after {@link GIVE_BACK_STOP_TIMEOUT_S} s; a freeze freezes. The request is waited for first
 * when it still runs; nothing is sent when the instance is already where the operator wanted it (a
 * stop that came after the start, or one the operator sent again). Answers how the request ended
 * and what was done; throws GIVE_BACK_FAILED when the instance could not be brought down.
 */
export async function giveBack(client: InstanceClient, instance: string, request: OperationObject): Promise<{ ended: string; done: string }> {
  const verb = stateChangeOf(request.description) === 'freeze' ? 'freeze' : 'stop';
  const ended = await requestEnd(client, request);
  const done = await bringDown(client, instance, request, verb);
  return { ended, done };
}

/**
 * How the operator's request ended, waited for when it still runs (it was sent just as the start
 * ended, and may be stopping the instance now): "the daemon refused it (…)", or "it succeeded".
 */
async function requestEnd(client: InstanceClient, request: OperationObject): Promise<string> {
  if (isFinalOperationCode(request.status_code))
    return request.status_code === StatusCode.Success ? 'it succeeded' : `the daemon refused it: ${request.err || request.status}`;
  try {
    await (await client.getOperation(request.id)).wait({ timeoutMs: 30_000 });
    return 'it succeeded';
  } catch (err) {
    const refused = ['OPERATION_FAILED', 'API_BUSY'].includes(String((err as { code?: string }).code));
    return `${refused ? 'the daemon refused it' : 'its end is not known'}: ${(err as Error).message}`;
  }
}

async function bringDown(client: InstanceClient, instance: string, request: OperationObject, verb: 'stop' | 'freeze'): Promise<string> {
  try {
    const state = await client.getInstanceState(instance);
    const down = verb === 'freeze' ? [StatusCode.Frozen, StatusCode.Stopped] : [StatusCode.Stopped];
    if ((down as number[]).includes(state.status_code)) return `it is ${state.status} already`;
    if (verb === 'freeze') {
      const op = await client.changeState(instance, { action: 'freeze' });
      await op.wait();
      return `frozen again (operation ${op.id})`;
    }
    try {
      const op = await client.changeState(instance, { action: 'stop', force: false, timeout: GIVE_BACK_STOP_TIMEOUT_S });
      await op.wait();
      return `stopped again (operation ${op.id})`;
    } catch (err) {
      const op = await client.changeState(instance, { action: 'stop', force: true });
      await op.wait();
      return `stopped again, forced when a clean shutdown failed (${(err as Error).message}) (operation ${op.id})`;
    }
  } catch (err) {
    throw new ReflexError(
      'GIVE_BACK_FAILED',
      `"${request.description}" (operation ${request.id}, not Reflex's) met this start in flight and the daemon refused it; ${instance} could not be ${verb === 'stop' ? 'stopped' : 'frozen'} again as the operator asked: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
