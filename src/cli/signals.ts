// Waiting for the signal that stops a long-running command. Its own module so that light commands (the
// proxy) need not load serve.ts and the API server stack behind it.

/** Resolves on the first SIGTERM or SIGINT (logged when a log is given). */
export function signalled(log?: {
  info(msg: string, fields?: Record<string, unknown>): void;
}): Promise<void> {
  return new Promise<void>((resolveSignal) => {
    const onSignal = (sig: string): void => {
      log?.info('shutting down', { signal: sig });
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolveSignal();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
