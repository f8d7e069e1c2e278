import { randomUUID } from 'node:crypto';
import winston from 'winston';

const secrets = new Set<string>();
const SECRET_KEYS = /pass(word)?|token|secret|authorization|cookie/i;

/** Remember a secret value so that it is masked wherever it would appear in a log line. */
export function registerSecret(value: string): void {
  if (value.length >= 4) secrets.add(value);
}

function mask(text: string): string {
  let masked = text;
  for (const secret of secrets) if (masked.includes(secret)) masked = masked.split(secret).join('***');
  return masked;
}

function redact(value: unknown, key = ''): unknown {
  if (SECRET_KEYS.test(key) && value !== undefined && value !== null) return '***';
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((item) => redact(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  }
  return value;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) info[key] = redact(info[key], key === 'message' ? '' : key);
  return info;
});

const readable = winston.format.printf(({ level, message, timestamp, ...fields }) => {
  const extra = Object.entries(fields)
    // A field without a value says nothing (JSON lines leave it out too).
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${String(timestamp)} ${level} ${String(message)}${extra === '' ? '' : ` ${extra}`}`;
});

/**
 * One logger for the process: JSON lines when stderr is not a terminal (containers, CI),
 * readable lines on a terminal. Secrets are masked by key name and by registered value.
 */
export function createLogger(
  options: { level?: string; json?: boolean; stream?: NodeJS.WritableStream } = {},
): winston.Logger {
  const stream = options.stream ?? process.stderr;
  const json = options.json ?? !(stream as { isTTY?: boolean }).isTTY;
  return quietBelowLevel(
    winston.createLogger({
      level: options.level ?? process.env.CONNECT2ERP_LOG_LEVEL ?? 'info',
      format: winston.format.combine(
        redactFormat(),
        winston.format.timestamp(),
        json ? winston.format.json() : readable,
      ),
      transports: [new winston.transports.Stream({ stream })],
    }),
  );
}

/**
 * Winston formats a line (masks, time, JSON) before its transport drops it for its level, so each
 * document's debug line would cost a link that much for nothing: the methods of the levels below
 * the logger's return at once. Its children inherit them; its level is never changed after.
 */
function quietBelowLevel(logger: winston.Logger): winston.Logger {
  for (const level of Object.keys(logger.levels).filter((name) => !logger.isLevelEnabled(name)))
    Object.defineProperty(logger, level, { value: () => logger });
  return logger;
}

export type Logger = winston.Logger;

/** A command's logger: every line carries the command's run id (`run` makes its own, the report's). */
export const commandLogger = (level?: string): Logger => createLogger({ level }).child({ runId: randomUUID() });
