import type { Command } from 'commander';
import { AuditLog } from '../../audit/audit-log.js';
import { connectRedis } from '../../redis/connect.js';
import { keySpace } from '../../redis/key-space.js';
import { Approvals, describeActions, type Approval } from '../../remediation/approvals.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { operatorName, printJson } from '../option-values.js';

/** How long `reflex approve` waits for a worker to queue the approved actions before it says it did not see it. */
const settleWaitMs = 10_000;

/** An Approvals over the configured Redis for the length of `use`: decisions only (the workers settle them). */
async function withApprovals<T>(opts: Record<string, unknown>, use: (approvals: Approvals) => Promise<T>): Promise<T> {
  const config = resolveConfig(opts);
  const keys = keySpace(config.prefix);
  const redis = await connectRedis(config.redisUrl);
  try {
    const audit = new AuditLog(redis, keys.audit, { maxRecords: config.auditMaxRecords, maxAgeMs: config.auditMaxAgeMs });
    return await use(new Approvals({ redis, keys: keys.approvals, audit }));
  } finally {
    redis.disconnect();
  }
}

function line(a: Approval): string {
  const decided = a.decision?.actor ? ` by ${a.decision.actor}` : '';
  const until = a.status === 'pending' ? ` until ${new Date(a.expiresAt).toISOString()}` : decided;
  return `${a.id}  ${a.status.padEnd(9)} ${a.project}/${describeActions(a)}, ${a.role} or above${until}`;
}

/**
 * `reflex approve ID` / `reflex deny ID`: decides a rule's request for approval from the shell,
 * audited as the shell user (origin `cli`). Whoever holds the Redis credentials may decide, as an
 * admin may in the console. An approval waits (up to 10 s) for a worker to queue the actions.
 */
function registerDecision(program: Command, verb: 'approve' | 'deny'): void {
  withConnectionOptions(
    program
      .command(verb)
      .description(
        verb === 'approve'
          ? "approve a rule's actions waiting for approval: they are queued and re-checked at the moment of acting"
          : "deny a rule's actions waiting for approval: nothing is done",
      )
      .argument('<id>', 'the approval id (the alert names it; reflex approvals lists them)'),
  )
    .option('--reason <text>', 'why, for the audit trail')
    .option('--json', 'print one JSON object {decided, approval, why}')
    .action(async (id: string, opts: Record<string, unknown>) => {
      await withApprovals(opts, async (approvals) => {
        const by = { actor: operatorName(), origin: 'cli', role: 'admin' } as const;
        const result = await approvals.decide(id, verb === 'approve' ? 'approved' : 'denied', by, opts.reason as string | undefined);
        let approval = result.approval;
        if (result.decided && verb === 'approve') {
          const until = Date.now() + settleWaitMs;
          while (!approval.settled && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 200));
            approval = (await approvals.get(id)) ?? approval;
          }
        }
        if (!result.decided) process.exitCode = 1;
        if (opts.json) return printJson({ decided: result.decided, approval, why: result.decided ? null : result.why });
        if (!result.decided) return void process.stderr.write(`${result.why}\n`);
        const queued =
          verb === 'deny'
            ? 'nothing is done'
            : approval.settled
              ? 'queued; re-checked at the moment of acting (reflex audit --correlation ' + approval.correlationId + ')'
              : 'no worker has queued it yet: it is, on the next settle round of a running worker';
        process.stdout.write(`${describeActions(approval)} ${approval.status} by ${by.actor}: ${queued}\n`);
      });
    });
}

export function registerApprove(program: Command): void {
  registerDecision(program, 'approve');
}

export function registerDeny(program: Command): void {
  registerDecision(program, 'deny');
}

/** `reflex approvals`: the requests waiting for a decision, and the recently settled ones. */
export function registerApprovals(program: Command): void {
  withConnectionOptions(program.command('approvals').description("list rules' actions waiting for approval, and the recently decided"))
    .option('--json', 'print one JSON object a line')
    .action(async (opts: Record<string, unknown>) => {
      await withApprovals(opts, async (approvals) => {
        const all = await approvals.list();
        if (opts.json) return all.forEach((a) => printJson(a));
        if (all.length === 0) return void process.stdout.write('no approvals waiting or recently decided\n');
        for (const a of all) process.stdout.write(`${line(a)}\n`);
      });
    });
}
