// Structured JSON logs, one line per event, on stderr. Never log key bodies or request texts.
export type LogLevel = 'info' | 'error' | 'silent';

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  /** Something an operator must notice (shown at every level but silent). */
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel): Logger {
  const write = (lvl: string, msg: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
  return {
    info: (msg, fields) => level === 'info' && write('info', msg, fields),
    warn: (msg, fields) => level !== 'silent' && write('warn', msg, fields),
    error: (msg, fields) => level !== 'silent' && write('error', msg, fields),
  };
}
