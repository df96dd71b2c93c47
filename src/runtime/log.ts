/**
 * Structured logging (pino). The level is resolved once at start-up; hot paths log nothing at info.
 * Secrets never reach a log line: the redact list covers every header and field that carries one.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'secret', 'passphrase', 'signature', 'apiKey',
  '*.secret', '*.passphrase', '*.signature', '*.apiKey',
  'headers.authorization', 'headers.svc_signature', 'headers.svc_passphrase', 'headers.svc_api_key',
  'headers.poly_signature', 'headers.poly_passphrase', 'headers.poly_api_key',
  'headers["svc-signature"]', 'headers["svc-passphrase"]', 'headers["svc-api-key"]',
  'headers["poly-signature"]', 'headers["poly-passphrase"]', 'headers["poly-api-key"]',
];

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'pm-exchange'): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}

/** A logger that drops everything: tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
