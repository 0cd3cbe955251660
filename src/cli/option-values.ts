import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { parseTimeArg } from '../audit/audit-query.js';
import { durationExamples, readDuration } from '../config/duration.js';

/**
 * A duration option (`--wait 1h30m`), in ms. A bare number is refused unless 0: on the command
 * line `--duration 30` is more likely a slip than 30 ms. Anything else is a usage error (exit 2).
 */
export function durationValue(text: string): number {
  const ms = readDuration(text);
  if (ms === undefined || (ms !== 0 && isBareNumber(text))) throw new InvalidArgumentError(`expected a duration such as ${durationExamples}`);
  return ms;
}

/** A point in time: a duration back from now (`--since 1h30m`) or an ISO-8601 timestamp. */
export function timeValue(text: string): Date {
  const bare = isBareNumber(text);
  const ms = bare ? undefined : readDuration(text);
  const at = ms !== undefined ? new Date(Date.now() - ms) : bare ? undefined : parseTimeArg(text);
  if (!at) throw new InvalidArgumentError(`expected a duration back from now (${durationExamples}) or an ISO timestamp`);
  return at;
}

/** A whole number option at least `min` (`--last 20`). */
export function wholeNumber(min: number): (text: string) => number {
  return (text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number, at least ${min}`);
    return n;
  };
}

/** Ends the command with a usage error (exit 2) that commander prints like its own. */
export function usageError(cmd: Command, message: string): never {
  return cmd.error(message, { exitCode: 2, code: 'reflex.usage' });
}

/**
 * The JSON in a file an option names (`--instance FILE`): text that is not JSON is a usage error
 * (exit 2) naming the option and the file. A file that cannot be read fails as every file does
 * (one line, exit 1: entry.ts).
 */
export function readOptionJson(cmd: Command, option: string, path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    return usageError(cmd, `${option} ${path}: not JSON (${(err as Error).message})`);
  }
}

/** The `--json` output of a command: one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function isBareNumber(text: string): boolean {
  return /^\s*\d+(\.\d+)?\s*$/.test(text);
}

/** Who runs the command, as audit records name an operator: $USER, else the account's name. */
export function operatorName(): string {
  try {
    return process.env.USER ?? userInfo().username;
  } catch {
    return 'unknown';
  }
}
