import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { REDACTED } from '../log/redaction.js';
import { ReflexError } from '../errors/reflex-error.js';

/**
 * A secret read from the environment (a webhook URL with a token in it, an HMAC key). It prints
 * as `[redacted]` through toString, JSON and util.inspect, so it cannot leak through a log line
 * or an audit record by accident; only {@link Secret.reveal} gives the value.
 */
export class Secret {
  readonly #value: string;

  constructor(
    value: string,
    /** Where it came from (`env:NAME`, `file:PATH`), shown instead of the value. */
    readonly source: string,
  ) {
    this.#value = value;
  }

  /**
   * Reads `env[name]`; throws CONFIG_INVALID naming the variable (never a value) when it is unset
   * or empty, and `neededBy` (`notification receiver chat`) when given. Callers that speak of a
   * config field instead prefix the message themselves.
   */
  static fromEnv(name: string, env: NodeJS.ProcessEnv = process.env, neededBy?: string): Secret {
    const value = env[name];
    if (!value) throw new ReflexError('CONFIG_INVALID', `environment variable ${name} is not set${needs(neededBy)}`);
    return new Secret(value, `env:${name}`);
  }

  /**
   * Reads the file at `path` (a systemd credential, a mounted Kubernetes secret), without its
   * trailing newline; throws CONFIG_INVALID naming the file (never a value) when it cannot be read or is empty.
   */
  static fromFile(path: string, neededBy?: string): Secret {
    let value: string;
    try {
      value = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ReflexError(
        'CONFIG_INVALID',
        `cannot read secret file ${path}${needs(neededBy)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { cause: err },
      );
    }
    if (!value) throw new ReflexError('CONFIG_INVALID', `secret file ${path} is empty${needs(neededBy)}`);
    return new Secret(value, `file:${path}`);
  }

  reveal(): string {
    return this.#value;
  }

  /** Replaces every occurrence of the secret in `text` (error messages may echo a URL). */
  scrub(text: string): string {
    return this.#value.length < 4 ? text : text.split(this.#value).join(REDACTED);
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${this.source}) ${REDACTED}`;
  }
}

function needs(neededBy: string | undefined): string {
  return neededBy ? ` (${neededBy} needs it)` : '';
}
