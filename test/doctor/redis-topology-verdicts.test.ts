import { describe, expect, it } from 'vitest';
import { judgeCluster, judgeSentinel, parseClusterInfo, parseClusterNodes, parseSentinelMaster } from '../../src/doctor/redis-topology.js';

/** `reflex doctor` on Redis Cluster and Sentinel: what it reads from their replies and how it judges them. */

const healthyInfo =
  'cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:6\r\n';
const nodes = [
  'a1 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460',
  'a2 10.0.0.2:7000@17000 master - 0 1700000000000 2 connected 5461-10922',
  'a3 10.0.0.3:7000@17000,node3 master - 0 1700000000000 3 connected 10923-16383',
  'b1 10.0.0.4:7000@17000 slave a1 0 1700000000000 1 connected',
  'b2 10.0.0.5:7000@17000 slave a2 0 1700000000000 2 connected',
  'b3 10.0.0.6:7000@17000 slave a3 0 1700000000000 3 connected',
].join('\n');

describe('reflex doctor on a Redis Cluster', () => {
  it('passes a cluster whose state is ok with every slot served, naming masters and replicas', () => {
    const checks = judgeCluster(parseClusterInfo(healthyInfo), parseClusterNodes(nodes));
    expect(checks).toEqual([
      { name: 'redis', ok: true, detail: 'Redis Cluster: 3 master(s), 3 replica(s), cluster_state ok, all 16384 slots covered' },
    ]);
  });

  it('fails a cluster with unassigned slots, saying how many and how to fix it', () => {
    const info = healthyInfo
      .replace('cluster_state:ok', 'cluster_state:fail')
      .replace('cluster_slots_assigned:16384', 'cluster_slots_assigned:10923')
      .replace('cluster_slots_ok:16384', 'cluster_slots_ok:10923');
    const [check] = judgeCluster(parseClusterInfo(info), parseClusterNodes(nodes));
    expect(check).toMatchObject({ ok: false, detail: expect.stringContaining('cluster_state fail, 5461 of 16384 slots unassigned') });
    expect(check!.fix).toMatch(/redis-cli --cluster fix/);
  });

  it('fails a cluster with a failed master, naming it, and warns of the master left without a replica', () => {
    const info = healthyInfo
      .replace('cluster_state:ok', 'cluster_state:fail')
      .replace('cluster_slots_ok:16384', 'cluster_slots_ok:10923')
      .replace('cluster_slots_fail:0', 'cluster_slots_fail:5461');
    const failed = nodes
      .replace('a2 10.0.0.2:7000@17000 master', 'a2 10.0.0.2:7000@17000 master,fail')
      .replace('b2 10.0.0.5:7000@17000 slave', 'b2 10.0.0.5:7000@17000 slave,fail');
    const checks = judgeCluster(parseClusterInfo(info), parseClusterNodes(failed));
    expect(checks[0]).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/5461 slots on failing masters, failing: 10\.0\.0\.2:7000, 10\.0\.0\.5:7000/),
    });
    expect(checks[1]).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringMatching(/^master\(s\) without a working replica: 10\.0\.0\.2:7000;/),
    });
  });

  it('reads addresses without the bus port or hostname, and ignores nodes without an address', () => {
    const parsed = parseClusterNodes(`${nodes}\nc9 :0@0 master,noaddr - 0 0 0 disconnected`);
    expect(parsed.map((n) => n.address)).toEqual([
      '10.0.0.1:7000',
      '10.0.0.2:7000',
      '10.0.0.3:7000',
      '10.0.0.4:7000',
      '10.0.0.5:7000',
      '10.0.0.6:7000',
    ]);
    expect(parsed.filter((n) => n.role === 'replica').map((n) => n.masterId)).toEqual(['a1', 'a2', 'a3']);
  });
});

const masterReply = (over: Record<string, string> = {}) =>
  Object.entries({
    name: 'mymaster',
    ip: '10.0.0.1',
    port: '6379',
    flags: 'master',
    'num-slaves': '2',
    'num-other-sentinels': '2',
    quorum: '2',
    ...over,
  }).flat();

describe('reflex doctor on Sentinel', () => {
  it('names the master, its address and how many replicas and sentinels watch it', () => {
    expect(judgeSentinel('mymaster', parseSentinelMaster(masterReply()))).toEqual([
      { name: 'redis', ok: true, detail: 'Redis Sentinel: master mymaster at 10.0.0.1:6379, 2 replica(s), 3 sentinel(s), quorum 2' },
    ]);
  });

  it('fails a master the sentinels see down', () => {
    const [check] = judgeSentinel('mymaster', parseSentinelMaster(masterReply({ flags: 'master,s_down,o_down' })));
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/the master is s_down, o_down/) });
  });

  it('fails a set-up with fewer sentinels than its quorum, which can never fail over', () => {
    const [check] = judgeSentinel('mymaster', parseSentinelMaster(masterReply({ 'num-other-sentinels': '0' })));
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/1 sentinel\(s\), quorum 2; fewer sentinels than the quorum/) });
  });

  it('warns of a master without a replica (nothing to promote)', () => {
    const checks = judgeSentinel('mymaster', parseSentinelMaster(masterReply({ 'num-slaves': '0' })));
    expect(checks.map((c) => [c.ok, c.warning ?? false])).toEqual([
      [true, false],
      [true, true],
    ]);
  });
});
