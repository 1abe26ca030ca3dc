// Polling for end-to-end tests: the machine is shared and slow at times, so tests wait for a
// condition with a deadline instead of sleeping a fixed time.

/**
 * Calls `probe` every `intervalMs` until it returns something other than undefined or false, and
 * resolves to that. After `ms` it fails naming `what` and the last error the probe threw.
 */
export async function until<T>(
  what: string | (() => string),
  ms: number,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  intervalMs = 100,
): Promise<Exclude<T, false>> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as Exclude<T, false>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const name = typeof what === 'string' ? what : what();
      throw new Error(
        `timed out after ${ms} ms waiting for ${name}${last === undefined ? '' : `: ${String(last)}`}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
