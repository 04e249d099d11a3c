/** The process's logger: pino at LOG_LEVEL, with secrets (keys, passwords, cookies) redacted wherever they appear. */
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        '*.password',
        '*.passwordHash',
        '*.key',
        '*.keyHash',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  });
}
