/** The sum of a counter's samples over all its labels in a Prometheus text exposition. */
export function counterSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** A counter of an app's /metrics, or undefined when the app does not answer in time (paused, dead). */
export async function scrapeCounter(url: string, name: string, timeoutMs = 400): Promise<number | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? counterSum(await res.text(), name) : undefined;
  } catch {
    return undefined;
  }
}
