import { describe, expect, it } from 'vitest';
import { toAlert, type AlertInput } from '../../src/alerts/alert.js';
import { Router, type RouteConfig } from '../../src/notify/router.js';
import { crashAlert } from './notifier-fixture.js';

const receivers = new Set(['default', 'pager', 'db-team', 'audit-sink', 'chat']);
const route: RouteConfig = {
  receiver: 'default',
  groupWaitMs: 1000,
  routes: [
    { match: { kind: 'instance.crash-loop' }, receiver: 'pager', groupBy: ['instance'] },
    { receiver: 'audit-sink', continue: true, groupWaitMs: 0 },
    { matchRe: { instance: 'db-.*' }, receiver: 'db-team', routes: [{ match: { severity: 'critical' }, receiver: 'pager' }] },
    { match: { project: ['staging', 'dev'] }, receiver: 'chat' },
    { filter: (a) => a.labels.team === 'web', receiver: 'chat', repeatIntervalMs: 60_000 },
  ],
};
const router = new Router(route, receivers);
const routesOf = (input: AlertInput) => router.match(toAlert(input)).map((r) => `${r.id}:${r.receiver}`);

describe('routing', () => {
  it('the first matching child takes the alert; `continue` lets later siblings match too', () => {
    expect(routesOf(crashAlert('db-1', { severity: 'warning' }))).toEqual(['0.1:audit-sink', '0.2:db-team']);
  });

  it('nested routes refine by severity', () => {
    expect(routesOf(crashAlert('db-1', { severity: 'critical' }))).toEqual(['0.1:audit-sink', '0.2.0:pager']);
  });

  it('matches by kind before anything else', () => {
    expect(routesOf(crashAlert('db-1', { kind: 'instance.crash-loop' }))).toEqual(['0.0:pager']);
  });

  it('matches one of several values, a filter function, and falls back to the parent', () => {
    expect(routesOf(crashAlert('web-1', { project: 'staging' }))).toEqual(['0.1:audit-sink', '0.3:chat']);
    expect(routesOf(crashAlert('web-1', { labels: { team: 'web' } }))).toEqual(['0.1:audit-sink', '0.4:chat']);
    expect(routesOf(crashAlert('web-1'))).toEqual(['0.1:audit-sink']);
  });

  it('children inherit unset settings from their parent', () => {
    const [sink, chat] = router.match(toAlert(crashAlert('web-1', { labels: { team: 'web' } })));
    expect(sink).toMatchObject({ groupWaitMs: 0, groupBy: ['kind', 'project'], groupIntervalMs: 300_000 });
    expect(chat).toMatchObject({ groupWaitMs: 1000, repeatIntervalMs: 60_000 });
  });

  it('a root route alone sends everything to its receiver', () => {
    expect(new Router({ receiver: 'chat' }, receivers).match(toAlert(crashAlert('x'))).map((r) => r.receiver)).toEqual(['chat']);
  });

  it('unknown receivers, a root without receiver and bad expressions are configuration errors', () => {
    expect(() => new Router({ receiver: 'nobody' }, receivers)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('"nobody"') }),
    );
    expect(() => new Router({ routes: [] }, receivers)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new Router({ receiver: 'chat', routes: [{ matchRe: { instance: '(' } }] }, receivers)).toThrow(/matchRe.instance/);
    expect(() => new Router({ receiver: 'chat', groupWaitMs: -1 }, receivers)).toThrow(/groupWaitMs/);
  });
});
