import type { Action, ActionOutcome } from './action.js';

/** Sets (or, with an empty value, unsets) config keys with PATCH; nothing to do when they already hold. */
export const patchConfigAction: Action = {
  name: 'patch-config',
  describe: 'set config keys (params: config: { key: value }; "" unsets)',
  async run(ctx): Promise<ActionOutcome> {
    const wanted = (ctx.params.config ?? {}) as Record<string, string>;
    const { value, etag } = await ctx.client.getInstance(ctx.instance);
    const changes = Object.entries(wanted).filter(([k, v]) => (value.config[k] ?? '') !== v);
    if (!changes.length) return { result: 'skipped', summary: 'config already as wanted' };
    if (ctx.dryRun) return { result: 'dry-run', summary: `would set ${changes.map(([k, v]) => `${k}=${v}`).join(', ')}` };
    await ctx.call({ method: 'PATCH', path: `/1.0/instances/${ctx.instance}`, action: 'patch-config' }, () => ctx.client.patchInstance(ctx.instance, { config: Object.fromEntries(changes) }, etag));
    return { result: 'done', summary: `set ${changes.map(([k, v]) => `${k}=${v}`).join(', ')}` };
  },
};

/**
 * Any API call (params: method, path with `{instance}` replaced, body). Not level-triggered: the
 * rule's idempotency key (one job per rule and incident) is what keeps it from running twice.
 */
export const apiCallAction: Action = {
  name: 'api-call',
  describe: 'a custom API call (params: method, path with {instance}, body)',
  async run(ctx): Promise<ActionOutcome> {
    const method = String(ctx.params.method ?? 'POST').toUpperCase();
    const path = String(ctx.params.path ?? '').replaceAll('{instance}', encodeURIComponent(ctx.instance));
    if (!path.startsWith('/1.0/')) throw new Error(`api-call path must start with /1.0/, got "${path}"`);
    if (ctx.dryRun) return { result: 'dry-run', summary: `would ${method} ${path}` };
    const op = await ctx.call({ method, path, action: 'api-call' }, async () => {
      const res = await ctx.client.transport.request(method, path, { body: ctx.params.body });
      if (res.kind === 'async') return (await ctx.client.getOperation(res.envelope.metadata.id)) ?? undefined;
      return undefined;
    });
    return { result: 'done', summary: `${method} ${path} done`, operationId: op?.id };
  },
};
