// Structured logs: one JSON object per line on stderr. Callers pass object keys and resourceVersions
// as fields; nothing here ever receives a request's headers, so no token can reach a log line.
// Every component logs through Logger (or Pick<Logger, 'info' | 'warn'> where it never logs an error).
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function jsonLogger(
  write: (line: string) => void = (l) => process.stderr.write(l),
  component = 'apiserver',
): Logger {
  const emit = (level: string, msg: string, fields?: LogFields): void => {
    write(`${JSON.stringify({ ts: new Date().toISOString(), level, component, msg, ...fields })}\n`);
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
