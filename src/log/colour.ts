/**
 * Whether output to `stream` may carry ANSI colours: never when NO_COLOR is set to anything but
 * the empty string (https://no-color.org), always when FORCE_COLOR is set (other than `0` or
 * `false`), else only on a terminal. NO_COLOR wins over FORCE_COLOR: an operator's opt-out is the
 * stronger wish.
 */
export function useColour(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false') return true;
  return Boolean(stream.isTTY);
}
