/**
 * Applies a consumer's batch of records; if the batch fails for one record's fault (`isFault`:
 * the data is wrong, retrying never helps), applies each record alone and hands the ones that
 * still fail to `setAside`, so one bad record neither blocks its partition nor takes the good
 * ones down with it. Any other failure (a dependency down, a lost race, a bug) is thrown as it
 * is: the caller retries the batch, and records applied alone meanwhile are applied again, so
 * `apply` must be idempotent per record.
 */
export async function applyIsolatingFaults<T>(
  items: readonly T[],
  apply: (items: readonly T[]) => Promise<void>,
  isFault: (err: unknown) => boolean,
  setAside: (item: T, err: unknown) => Promise<void>,
): Promise<void> {
  if (items.length === 0) return;
  try {
    await apply(items);
    return;
  } catch (err) {
    if (!isFault(err)) throw err;
  }
  for (const item of items) {
    try {
      await apply([item]);
    } catch (err) {
      if (!isFault(err)) throw err;
      await setAside(item, err);
    }
  }
}
