import { inhibitRuleSchema, type InhibitRuleSettings } from '../config/notification-settings.js';
import { ReflexError } from '../errors/reflex-error.js';
import { alertValue, type Alert } from './alert.js';
import { alertMatcher } from './alert-matcher.js';
import { stormKind } from './catalogue.js';

/**
 * The inhibition rules used when the settings give none: a failure storm on a member, or the
 * member being offline, says it all, so the crash and Error alerts of that member's instances
 * (those raised before the storm was recognised) are left out while that alert fires; an offline
 * member's storm too.
 */
export const defaultInhibitRules: InhibitRuleSettings[] = [
  { sourceMatch: { kind: stormKind }, targetMatch: { kind: ['instance.crashed', 'instance.error'] }, equal: ['target', 'member'] },
  // A member that is offline explains its instances' failures the same way.
  { sourceMatch: { kind: 'member.offline' }, targetMatch: { kind: ['instance.crashed', 'instance.error', stormKind] }, equal: ['target', 'member'] },
];

interface CompiledRule {
  source: (a: Alert) => boolean;
  target: (a: Alert) => boolean;
  equal: string[];
}

/**
 * Alertmanager's inhibition: an alert matching a rule's target matchers is muted while another,
 * firing alert matches its source matchers with the same values of the `equal` keys. Decided when
 * a group is flushed, against the firing alerts of that moment.
 */
export class Inhibitor {
  private readonly rules: CompiledRule[];

  /** Validates the rules (undefined: {@link defaultInhibitRules}); throws CONFIG_INVALID. */
  constructor(rules: InhibitRuleSettings[] | undefined) {
    this.rules = (rules ?? defaultInhibitRules).map((input, i) => {
      const where = `notification inhibitRules.${i}`;
      const parsed = inhibitRuleSchema.safeParse(input);
      if (!parsed.success)
        throw new ReflexError(
          'CONFIG_INVALID',
          `${where}: ${parsed.error.issues.map((x) => `${x.path.join('.') || '(rule)'}: ${x.message}`).join('; ')}`,
        );
      const r = parsed.data;
      return {
        source: alertMatcher(r.sourceMatch, r.sourceMatchRe, where),
        target: alertMatcher(r.targetMatch, r.targetMatchRe, where),
        equal: r.equal,
      };
    });
  }

  /** The alerts of `alerts` that `firing` inhibits, fingerprint → why (`inhibited by storm member:node1`). */
  inhibited(alerts: Alert[], firing: Alert[]): Map<string, string> {
    const out = new Map<string, string>();
    for (const a of alerts) {
      for (const rule of this.rules) {
        if (!rule.target(a)) continue;
        const by = firing.find(
          (s) =>
            s.status === 'firing' &&
            s.fingerprint !== a.fingerprint &&
            rule.source(s) &&
            rule.equal.every((k) => (alertValue(s, k) ?? '') === (alertValue(a, k) ?? '')),
        );
        if (by) {
          out.set(a.fingerprint, `inhibited by ${by.kind} ${by.instance}`);
          break;
        }
      }
    }
    return out;
  }
}
