import { Agent, request } from 'undici';
import { StatusCode } from '../../src/client/status-code.js';
import type { CallRecord } from '../../src/simulator/context.js';

/** The User-Agent of every call an operator makes, followed by `/<step>`: how the checker tells them from Reflex's. */
export const operatorAgent = 'reflex-chaos-operator';

/** The User-Agent of the calls that remove a checked history's instances: no operator's decision. */
export const cleanupAgent = 'reflex-chaos-cleanup';

/** What a create sends as `source`: none on the simulator, the test image on a real daemon. */
export type CreateSource = Record<string, unknown>;

/**
 * An operator at the daemon's API over its unix socket, as `lxc` would be: each call waits for its
 * operation, and carries a User-Agent naming the step, so the daemon's own history of calls says
 * who asked for what. Failures (already stopped, busy, gone) are answered, not thrown: an operator
 * at a keyboard gets an error and moves on.
 */
export class Operator {
  private readonly agent: Agent;
  private readonly name: string;
  private readonly source: CreateSource;
  private readonly extraConfig: Record<string, string>;
  private readonly journal: CallRecord[] | undefined;

  /**
   * `source` and `config` are added to each create (default: no image, as the simulator takes it);
   * `agent` is the User-Agent before `/<step>` (default {@link operatorAgent}); with `journal`, each
   * call is also written there as the daemon would record it (a real daemon keeps no such history).
   */
  constructor(socketPath: string, opts: { source?: CreateSource; config?: Record<string, string>; agent?: string; journal?: CallRecord[] } = {}) {
    this.agent = new Agent({ connect: { socketPath } });
    this.name = opts.agent ?? operatorAgent;
    this.source = opts.source ?? { type: 'none' };
    this.extraConfig = opts.config ?? {};
    this.journal = opts.journal;
  }

  /** stop (forced, as `lxc stop -f`), start. */
  state(step: string, name: string, action: 'start' | 'stop'): Promise<string | undefined> {
    return this.journaled(step, name, action, () =>
      this.call(step, 'PUT', `/1.0/instances/${name}/state`, { action, force: action === 'stop', timeout: -1 }),
    );
  }

  config(step: string, name: string, config: Record<string, string>): Promise<string | undefined> {
    return this.journaled(step, name, 'update', () => this.call(step, 'PATCH', `/1.0/instances/${name}`, { config }));
  }

  remove(step: string, name: string): Promise<string | undefined> {
    return this.journaled(step, name, 'delete', () => this.call(step, 'DELETE', `/1.0/instances/${name}`));
  }

  rename(step: string, name: string, to: string): Promise<string | undefined> {
    return this.journaled(step, name, 'rename', () => this.call(step, 'POST', `/1.0/instances/${name}`, { name: to }));
  }

  create(step: string, name: string, config: Record<string, string>): Promise<string | undefined> {
    return this.journaled(step, name, 'create', () =>
      this.call(step, 'POST', '/1.0/instances', { name, source: this.source, config: { ...this.extraConfig, ...config } }),
    );
  }

  /** The instance's status code and `volatile.uuid`, or undefined when it does not exist. */
  async show(name: string): Promise<{ status: number; uuid: string } | undefined> {
    const res = await request(`http://daemon/1.0/instances/${name}`, { dispatcher: this.agent, headers: { 'user-agent': `${this.name}/show` } });
    const body = (await res.body.json()) as { metadata?: { status_code?: number; config?: Record<string, string> } };
    if (res.statusCode === 404) return undefined;
    return { status: body.metadata?.status_code ?? 0, uuid: body.metadata?.config?.['volatile.uuid'] ?? '' };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Runs a call, written to the journal (when there is one) with the status and identity it met. */
  private async journaled(step: string, name: string, action: string, send: () => Promise<string | undefined>): Promise<string | undefined> {
    if (!this.journal) return send();
    const before = await this.show(name);
    const at = Date.now();
    const error = await send();
    const uuid = before?.uuid ?? (await this.show(name))?.uuid ?? '';
    const record = { at, project: 'default', name, uuid, action, statusBefore: before?.status ?? StatusCode.Stopped, agent: `${this.name}/${step}` };
    this.journal.push({ ...record, result: error === undefined ? 'success' : 'failure' });
    return error;
  }

  /** Sends one call and waits for its operation; the error text when either fails. */
  private async call(step: string, method: string, path: string, body?: unknown): Promise<string | undefined> {
    const headers: Record<string, string> = { 'user-agent': `${this.name}/${step}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`http://daemon${path}`, {
      method: method as 'PUT',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: this.agent,
    });
    const answer = (await res.body.json()) as { type?: string; error?: string; operation?: string };
    if (answer.type === 'error' || res.statusCode >= 400) return answer.error || `HTTP ${res.statusCode}`;
    if (answer.type !== 'async' || !answer.operation) return undefined;
    const wait = await request(`http://daemon${answer.operation}/wait?timeout=30`, {
      dispatcher: this.agent,
      headers: { 'user-agent': `${this.name}/wait` },
    });
    const op = (await wait.body.json()) as { metadata?: { status_code?: number; err?: string }; error?: string };
    if (wait.statusCode >= 400) return op.error || `HTTP ${wait.statusCode}`;
    return op.metadata?.status_code === 200 ? undefined : op.metadata?.err || `operation ended ${op.metadata?.status_code}`;
  }
}
