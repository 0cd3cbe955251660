/**
 * What differs between two daemons by nature, replaced by placeholders so the rest of an `lxc`
 * command's output can be compared byte for byte: remote names, ids, fingerprints, times, PIDs,
 * MAC and IP addresses, sizes and resource counters, and progress lines (rewritten in place with
 * carriage returns, so their number depends on timing).
 */
export function normaliseOutput(text: string, ctx: { remote: string }): string {
  let out = text;
  // Progress: everything up to the last carriage return of a line is overwritten on a terminal.
  out = out
    .split('\n')
    .map((line) => (line.includes('\r') ? line.slice(line.lastIndexOf('\r') + 1) : line))
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n');
  out = out.replaceAll(`${ctx.remote}:`, 'R:');
  // lxc (and incus) adds this hint when a state change fails while it waits, not when the operation had already
  // failed by the time it looked (client/operations.go setupListener): a race on either daemon.
  out = out.replace(/^Try `(lxc|incus) info --show-log [^`]+` for more info\n?/gm, '');
  out = out.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>');
  out = out.replace(/\b[0-9a-f]{64}\b/g, '<fingerprint>');
  out = out.replace(/\b[0-9a-f]{12}\b/g, '<fingerprint>');
  out = out.replace(/\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b/g, '<mac>');
  // RFC 3339 times (JSON, YAML) and lxc's human forms.
  out = out.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, '<time>');
  out = out.replace(/\b\d{4}\/\d\d\/\d\d \d\d:\d\d (UTC|[A-Z]{3,4})\b/g, '<time>');
  out = out.replace(/\b[A-Z][a-z]{2} \d{1,2}, \d{4} at \d{1,2}:\d\d[ap]m \(\w+\)/g, '<time>');
  out = out.replace(/\b(PID|pid|Processes|processes): \d+/g, '$1: <n>');
  // The CPU time the instance's processes used: a command that works harder on the daemon's side shows a second.
  out = out.replace(/\bCPU usage \(in seconds\): \d+/g, 'CPU usage (in seconds): <n>');
  // lxc info lists swap only when the daemon reads some in use, which a host under memory pressure decides (seen on LXD 5.0.2 in a run).
  out = out.replace(/^ +Swap \((current|peak)\): .*\n/gm, '');
  out = out.replace(
    /"(pid|processes|usage|usage_peak|swap_usage|swap_usage_peak|total|bytes_received|bytes_sent|packets_received|packets_sent)": \d+/g,
    '"$1": <n>',
  );
  // The idmap comes from the host's /etc/subuid.
  out = out.replace(/\\?"(Hostid|Maprange)\\?":\d+/g, '"$1":<n>');
  out = out.replace(/\b\d+(\.\d+)?\s?(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)\b/g, '<size>');
  out = out.replace(/\b(\d{1,3}\.){3}\d{1,3}(\/\d+)?\b/g, '<ip>');
  out = out.replace(/\b\d+(\.\d+)?(ns|µs|ms|s)\b/g, '<duration>');
  return out;
}
