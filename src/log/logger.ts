import { pino, type Logger } from 'pino';

/** pino logger: pretty on a TTY, JSON lines otherwise (for log shippers). */
export function createLogger(level: string, opts: { name?: string; pretty?: boolean } = {}): Logger {
  const pretty = opts.pretty ?? Boolean(process.stdout.isTTY);
  return pino({
    name: opts.name ?? 'reflex',
    level,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}
