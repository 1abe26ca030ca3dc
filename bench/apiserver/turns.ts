// The order in which the two servers' steps run when they are measured together.

/**
 * The order in which the two subjects' steps run when they are measured together: each step waits for
 * its turn and passes it on when done. The create repetitions alternate (apiserver, up, apiserver, …),
 * so drift in the machine's load falls on both subjects alike instead of on whichever runs second; the
 * later steps run one subject after the other. A failure releases every waiter with the error.
 */
export class Turns {
  private at = 0;
  private failed: unknown;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly order: readonly string[]) {}

  async turn(step: string): Promise<void> {
    if (!this.order.includes(step)) throw new Error(`no turn for ${step}`);
    while (this.failed === undefined && this.order[this.at] !== step) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.failed !== undefined) throw this.failed;
  }

  done(step: string): void {
    if (this.order[this.at] !== step) throw new Error(`${step} is not the current turn`);
    this.at++;
    this.wakeAll();
  }

  fail(err: unknown): void {
    this.failed ??= err;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** apiserver's and up's steps, in the order Turns runs them. */
export function turnOrder(reps: number): string[] {
  const order = ['apiserver:setup', 'up:setup'];
  for (let rep = 0; rep < reps; rep++) order.push(`apiserver:create${rep}`, `up:create${rep}`);
  order.push('apiserver:rest', 'up:rest');
  return order;
}
