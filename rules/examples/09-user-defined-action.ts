import { StatusCode, defineAction, defineRule, z } from 'reflex-lxd';

/**
 * 09 — An action of your own. `defineAction` gives it a name rules use, a zod schema for its params
 * (checked when the rules load: a typo is an error at its file:line), and `run`. It runs through
 * the same path as the built-ins: the instance's lock and re-check, the retry policy, the audit log
 * and dry-run (where it is not run at all). `ctx.client` is the acting client: each call it sends
 * is checked against the instance's lock, audited with its path and marked as Reflex's own (its
 * events never trigger a rule as a crash would); there is no other client to reach.
 *
 * This one stamps the time of the last crash into the instance's config, for operators to see in
 * `lxc config show`.
 */
export const stampCrash = defineAction({
  name: 'example-stamp-crash',
  describe: 'set a config key to the time of the incident',
  params: z.strictObject({ key: z.string().startsWith('user.') }),
  async run(ctx) {
    const at = ctx.job?.event?.timestamp ?? new Date().toISOString();
    const { etag } = await ctx.client.getInstance(ctx.instance);
    await ctx.client.patchInstance(ctx.instance, { config: { [ctx.params.key]: at } }, etag);
    return { result: 'done', summary: `${ctx.params.key}=${at}` };
  },
});

export default [
  stampCrash,
  defineRule({
    name: 'example-stamp-crash',
    on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
    scope: { filter: 'config.user.reflex.stamp-crashes eq true' },
    actions: [{ action: 'example-stamp-crash', params: { key: 'user.reflex.last-crash' } }],
  }),
];
