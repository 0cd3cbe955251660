import type { Command } from 'commander';
import { AlertBoard, alertMute, type AlertsView } from '../../notify/alert-board.js';
import { Inhibitor } from '../../alerts/inhibition.js';
import { existsSync } from 'node:fs';
import { chooseNotifyConfig } from '../../notify/notify-config.js';
import { loadRulesFolder } from '../../rules/rules-folder.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { Silences } from '../../silences/silences.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { printJson } from '../option-values.js';

function printView(v: AlertsView): void {
  const out: string[] = [`firing alerts: ${v.firing.length}`];
  for (const a of v.firing) out.push(`  ${a.startsAt}  ${a.severity.padEnd(8)} ${a.kind}  ${a.instance} (project ${a.project})  ${a.summary}`);
  out.push(`pending groups: ${v.groups.length}`);
  for (const g of v.groups) {
    const labels = Object.entries(g.groupLabels)
      .map(([k, x]) => `${k}=${x}`)
      .join(' ');
    const next = g.next
      ? `sends [${g.next.status.toUpperCase()}${g.next.repeat ? ', repeat' : ''}] ${g.next.alerts.map((a) => `${a.instance}:${a.status}`).join(', ')}`
      : 'sends nothing';
    out.push(`  ${g.receiver}  ${labels}  next flush ${g.nextFlushAt ?? 'when the next alert arrives'}: ${next}`);
    for (const a of g.alerts)
      out.push(
        `    ${a.alert.status.padEnd(8)} ${a.alert.instance}  ${a.alert.kind}${a.notified ? `  (last message: ${a.notified})` : ''}${a.muted ? `  muted: ${a.muted}` : ''}`,
      );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/** `reflex alerts`: the firing alerts and the pending notification groups (what the next flush sends, and when). */
export function registerAlerts(program: Command): void {
  withConnectionOptions(
    program.command('alerts').description("list firing alerts and pending notification groups: what each group's next flush will send, and when"),
  )
    .option(
      '--json',
      'print one JSON document {firing: [alert], groups: [{groupKey, receiver, route, groupLabels, nextFlushAt?, lastSentAt?, alerts: [{alert, muted?, notified?}], next?: {status, alerts, repeat}}]}',
    )
    .action(async (opts) => {
      const config = resolveConfig(opts);
      // Inhibition rules from where the worker takes them: the config file, REFLEX_NOTIFY, or a
      // defineNotifications file in the rules folder (loaded only when the folder exists).
      const rulesFolder = existsSync(config.rulesDir) ? (await loadRulesFolder(config.rulesDir)).notifications : undefined;
      const notify = chooseNotifyConfig({ config: config.notifications, rulesFolder });
      const redis = await connectRedis(config.redisUrl);
      try {
        const keys = keySpace(config.prefix);
        const board = new AlertBoard(redis, keys.notify);
        const silences = new Silences(redis, keys.silences);
        const view = await board.view(alertMute(board, new Inhibitor(notify?.settings.inhibitRules), silences));
        if (opts.json) return printJson(view);
        printView(view);
      } finally {
        redis.disconnect();
      }
    });
}
