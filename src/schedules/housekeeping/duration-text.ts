const day = 86_400_000;

/** A duration in ms as the largest whole unit that states it exactly: `2d`, `90m`, `1500ms`. */
export function formatDuration(ms: number): string {
  if (ms % day === 0) return `${ms / day}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
