// A broadcast "something changed": waiters take next(), fire() wakes all of them at once and arms a
// fresh promise for the next round. Watchers sleep on it instead of polling.
export class ChangeSignal {
  private current = ChangeSignal.arm();

  private static arm(): { promise: Promise<void>; resolve: () => void } {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  }

  /** Resolves at the next fire(). */
  next(): Promise<void> {
    return this.current.promise;
  }

  fire(): void {
    const fired = this.current;
    this.current = ChangeSignal.arm();
    fired.resolve();
  }
}
