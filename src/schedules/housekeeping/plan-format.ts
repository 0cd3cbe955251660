import type { InstancePlan, PlanStep } from './instance-plan.js';

/** One line per step: `create snapshot auto-…`, `delete snapshot x (reason)`. */
export function describeStep(step: PlanStep): string {
  const dry = step.dryRun ? ' [dry-run]' : '';
  switch (step.kind) {
    case 'create-snapshot':
      return `create snapshot ${step.name}${step.expiresAt ? ` expiring ${step.expiresAt}` : ''}${dry}`;
    case 'delete-snapshot':
      return `delete snapshot ${step.name} (${step.task}: ${step.reason})${dry}`;
    case 'delete-instance':
      return `delete instance (${step.reason})${dry}`;
  }
}

/** The plan of one instance as readable text, as a dry-run prints it. */
export function formatPlan(plan: InstancePlan): string {
  const lines = [
    `${plan.project}/${plan.instance}: ${plan.steps.length === 0 ? 'nothing to do' : `${plan.steps.length} change(s), ${plan.order} (${plan.orderReason})`}`,
  ];
  for (const s of plan.steps) lines.push(`  - ${describeStep(s)}`);
  if (plan.keep.length) lines.push(`  keep: ${plan.keep.map((k) => `${k.name} [${k.reasons.join(', ')}]`).join('; ')}`);
  for (const n of plan.notes) lines.push(`  note: ${n}`);
  return lines.join('\n');
}

/** A compact form of the plan for audit records: what changes and what is kept, without notes. */
export function planSummary(plan: InstancePlan): { order: string; steps: string[]; keep: string[] } {
  return { order: `${plan.order} (${plan.orderReason})`, steps: plan.steps.map(describeStep), keep: plan.keep.map((k) => k.name) };
}
