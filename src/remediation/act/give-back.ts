import type { InstanceClient } from '../../client/client.js';
import { isFinalOperationCode, StatusCode } from '../../client/status-code.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { describeIdentity, identityOf, isAnotherInstance, type InstanceIdentity } from '../instance-identity.js';
import type { OperatorRequest } from '../operator-requests.js';

/** Seconds a stop that gives a start back waits for a clean shutdown before it is forced. */
export const GIVE_BACK_STOP_TIMEOUT_S = 30;

/**
 * Gives back a start of Reflex's that an operator's stop or freeze met in flight, the daemon having
 * refused it: does what the operator asked, through the action's own client (fenced, marked as
 * Reflex's, audited). A stop asks for a clean shutdown first, as `lxc stop` does, and is forced
 * after {@link GIVE_BACK_STOP_TIMEOUT_S} s; a freeze freezes. The request is waited for first
 * when it still runs; nothing is sent when the instance is already where the operator wanted it (a
 * stop that came after the start, or one the operator sent again), or when the name is another
 * instance's now (`identity` is the one the job was for). Answers the request as it
 * ended and what was done; throws GIVE_BACK_FAILED when the instance could not be brought down.
 */
export async function giveBack(
  client: InstanceClient,
  instance: string,
  request: OperatorRequest,
  identity: InstanceIdentity | undefined,
): Promise<{ ended: OperatorRequest; done: string }> {
  const ended = await requestEnd(client, request);
  const verb = request.action === 'freeze' ? 'freeze' : 'stop';
  try {
    // Read at the moment of acting: the instance Reflex started, not another one made under its name since.
    const state = (await client.getInstance(instance)).value;
    const now = identityOf(state);
    if (isAnotherInstance(identity, now))
      return {
        ended,
        done: `nothing done: ${instance} is another instance now (${describeIdentity(now)}; the one started had ${describeIdentity(identity)})`,
      };
    const down = verb === 'freeze' ? [StatusCode.Frozen, StatusCode.Stopped] : [StatusCode.Stopped];
    if ((down as number[]).includes(state.status_code)) return { ended, done: `it is ${state.status} already` };
    if (verb === 'freeze') {
      const op = await client.changeState(instance, { action: 'freeze' });
      await op.wait();
      return { ended, done: `frozen again (operation ${op.id})` };
    }
    try {
      const op = await client.changeState(instance, { action: 'stop', force: false, timeout: GIVE_BACK_STOP_TIMEOUT_S });
      await op.wait();
      return { ended, done: `stopped again (operation ${op.id})` };
    } catch (err) {
      const op = await client.changeState(instance, { action: 'stop', force: true });
      await op.wait();
      return { ended, done: `stopped again, forced when a clean shutdown failed (${(err as Error).message}) (operation ${op.id})` };
    }
  } catch (err) {
    throw new ReflexError(
      'GIVE_BACK_FAILED',
      `a ${request.action} of the operator's (operation ${request.operationId}) met this start in flight and the daemon refused it; ${instance} could not be ${verb === 'stop' ? 'stopped' : 'frozen'} again as the operator asked: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** The request as it ended, waited for when it still runs (it may be stopping the instance now); as it was when its end cannot be read. */
async function requestEnd(client: InstanceClient, request: OperatorRequest): Promise<OperatorRequest> {
  if (isFinalOperationCode(request.status)) return request;
  try {
    await (await client.getOperation(request.operationId)).wait({ timeoutMs: 30_000 });
    return { ...request, status: StatusCode.Success, err: '' };
  } catch (err) {
    const refused = ['OPERATION_FAILED', 'API_BUSY'].includes(String((err as { code?: string }).code));
    return refused ? { ...request, status: StatusCode.Failure, err: (err as Error).message } : request;
  }
}
