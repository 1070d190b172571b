/** Polls until `check` returns a value (not undefined/false), or fails after `ms`. */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, ms = 20_000, what = 'condition'): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
