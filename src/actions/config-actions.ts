import { z } from 'zod';
import type { ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

/** Sets (or, with an empty value, unsets) config keys with PATCH; nothing to do when they already hold. */
export const patchConfigAction = builtinAction({
  name: 'patch-config',
  describe: 'set config keys (params: config: { key: value }; "" unsets)',
  params: z.strictObject({ config: z.record(z.string().min(1), z.string()) }),
  async run(ctx): Promise<ActionOutcome> {
    const wanted = ctx.params.config;
    const { value, etag } = await ctx.client.getInstance(ctx.instance);
    const changes = Object.entries(wanted).filter(([k, v]) => (value.config[k] ?? '') !== v);
    if (!changes.length) return { result: 'skipped', summary: 'config already as wanted' };
    await ctx.client.patchInstance(ctx.instance, { config: Object.fromEntries(changes) }, etag);
    return { result: 'done', summary: `set ${changes.map(([k, v]) => `${k}=${v}`).join(', ')}` };
  },
});

/** Params of the api-call action. */
export const apiCallParamsSchema = z.strictObject({
  /** Default POST. */
  method: z
    .enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
    .or(z.enum(['get', 'post', 'put', 'patch', 'delete']))
    .default('POST'),
  /** An API path, `{instance}` replaced by the instance's name. */
  path: z.string().startsWith('/1.0/', 'an API path starting with /1.0/'),
  /** The JSON body. Default none. */
  body: z.unknown().optional(),
});

/**
 * Any API call (params: method, path with `{instance}` replaced, body). Not level-triggered: the
 * rule's idempotency key (one job per rule and incident) is what keeps it from running twice.
 */
export const apiCallAction = builtinAction({
  name: 'api-call',
  describe: 'a custom API call (params: method, path with {instance}, body)',
  params: apiCallParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const method = ctx.params.method.toUpperCase();
    const path = ctx.params.path.replaceAll('{instance}', encodeURIComponent(ctx.instance));
    const res = await ctx.client.transport.request(method, path, { body: ctx.params.body });
    if (res.kind === 'sync') return { result: 'done', summary: `${method} ${path} done` };
    const op = await ctx.client.getOperation(res.envelope.metadata.id);
    await op.wait();
    return { result: 'done', summary: `${method} ${path} done`, operationId: op.id };
  },
});
