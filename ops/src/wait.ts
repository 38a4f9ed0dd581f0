/**
 * Polls `check` until it returns true, with capped exponential backoff. Start-up waits are always
 * health checks, never fixed sleeps. `isDead` short-circuits when the process already exited.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; isDead?: () => string | undefined },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let delay = 100;
  for (;;) {
    if (await check().catch(() => false)) return;
    const dead = opts.isDead?.();
    if (dead !== undefined) throw new Error(`${what} exited during start-up: ${dead}`);
    if (Date.now() > deadline) throw new Error(`${what} not healthy after ${opts.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}
