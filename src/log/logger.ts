import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { isSensitiveName, REDACTED, redactText } from './redaction.js';
import { useColour } from './colour.js';

// The second line of defence: call sites never log a secret on purpose, and these paths catch one
// that slips in anyway (a config object, a request's headers). Deeper fields than one level under
// a key are not walked (fast-redact needs each path spelled out).
const secretKeys = ['dashboardToken', 'dashboardWriteToken', 'token', 'password', 'secret', 'authorization', 'cookie', 'apiKey', 'clientKeyPem'];
const urlKeys = ['redisUrl', 'url', 'target'];
const redactPaths = [...secretKeys, ...urlKeys]
  .flatMap((k) => [k, `*.${k}`])
  .concat(['headers["set-cookie"]', '*.headers.authorization', '*.headers.cookie']);

function censor(value: unknown, path: string[]): unknown {
  const key = path.at(-1) ?? '';
  if (isSensitiveName(key)) return value === undefined || value === null || value === '' ? value : REDACTED;
  return typeof value === 'string' ? redactText(value) : value;
}

function redactStrings(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (!value || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => redactStrings(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, isSensitiveName(k) && typeof v === 'string' ? REDACTED : redactStrings(v, depth + 1)]),
  );
}

/** pino's standard error serializer (`type`, `message`, `stack`, code, cause), with secrets removed from its text. */
function errSerializer(err: unknown): unknown {
  return redactStrings(stdSerializers.err(err as Error));
}

/**
 * pino logger: pretty on a TTY, JSON lines otherwise (for log shippers). Errors go under `err`
 * (type, message, stack); secret-named fields are redacted and URLs, messages and error texts
 * lose their credentials ({@link redactText}).
 */
export function createLogger(
  level: string,
  opts: { name?: string; pretty?: boolean; /** Where JSON lines go; default stdout. */ destination?: DestinationStream } = {},
): Logger {
  const pretty = opts.destination === undefined && (opts.pretty ?? Boolean(process.stdout.isTTY));
  const options: LoggerOptions = {
    name: opts.name ?? 'reflex',
    level,
    redact: { paths: redactPaths, censor },
    serializers: { err: errSerializer, error: errSerializer },
    hooks: {
      logMethod(args, method) {
        const clean = args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as Parameters<typeof method>;
        method.apply(this, clean);
      },
    },
    ...(pretty
      ? {
          transport: { target: 'pino-pretty', options: { colorize: useColour(process.stdout), translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } },
        }
      : {}),
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
