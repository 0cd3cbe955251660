import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { alertFingerprint, toAlert } from '../../src/alerts/alert.js';
import { alertMatcher } from '../../src/alerts/alert-matcher.js';
import { alertKinds, type AlertKindEntry } from '../../src/alerts/catalogue.js';

/** The kinds the first column of a table row names, in backticks. */
function kindsOfRows(section: string): string[] {
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...(l.split('|')[1] ?? '').matchAll(/`([a-z][a-z.-]*)`/g)].map((m) => m[1]!));
}

const doc = readFileSync('docs/notifications.md', 'utf8');
const entries = Object.entries(alertKinds as Record<string, AlertKindEntry>);

describe('the alert catalogue', () => {
  it('lists the same kinds as docs/notifications.md, each once', () => {
    const section = doc.split('### Every alert kind and what resolves it')[1]?.split('**Renamed kinds.**')[0] ?? '';
    expect(new Set(kindsOfRows(section))).toEqual(new Set(Object.keys(alertKinds)));
  });

  it('spells every kind subject.condition, and documents each former spelling', () => {
    const renamed = doc.split('**Renamed kinds.**')[1] ?? '';
    for (const [kind, entry] of entries) {
      expect(kind).toMatch(/^[a-z]+\.[a-z]+(-[a-z]+)*$/);
      if (entry.formerly) expect(renamed).toContain(`| \`${kind}\` | \`${entry.formerly}\` |`);
    }
  });

  it('says of every kind its severity, what raises it and what resolves it', () => {
    for (const [, entry] of entries) {
      expect(entry.severity.length).toBeGreaterThan(0);
      expect(entry.raisedBy).not.toBe('');
      expect(entry.resolvedBy).not.toBe('');
    }
  });

  it('keeps a renamed kind matched by its former spelling in routes and inhibition rules, with the fingerprint it had', () => {
    const alert = toAlert({
      kind: 'instance.crash-loop',
      severity: 'critical',
      target: 't',
      project: 'p',
      instance: 'i',
      summary: 's',
      correlationId: 'c',
    });
    expect(alertMatcher({ kind: ['crash-loop'] }, undefined, 'route')(alert)).toBe(true);
    expect(alertMatcher(undefined, { kind: 'crash-.*' }, 'route')(alert)).toBe(true);
    expect(alertMatcher({ kind: 'member.storm' }, undefined, 'route')(alert)).toBe(false);
    const before = toAlert({ kind: 'crash-loop', severity: 'critical', target: 't', project: 'p', instance: 'i', summary: 's', correlationId: 'c' });
    expect(alertMatcher({ kind: 'instance.crash-loop' }, undefined, 'route')(before), 'an alert raised before the rename').toBe(true);
    expect(alertFingerprint(alert)).toBe(alertFingerprint(before));
  });
});
