// A read-through cache of this process's recent reads: each key's value as read at most `ms` ago. For what is
// read on every request and may be a moment stale (a deployment's record, its CORS policy).
export interface RecentReads<T> {
  get(key: string): Promise<T | undefined>;
  /** Drops the key's copy (this process just changed what it reads). */
  forget(key: string): void;
}

export function recentReads<T>(
  read: (key: string) => Promise<T | undefined>,
  /** `keep`: whether a value read may serve later calls (one not yet final is read again, as a miss is). */
  opts: { ms?: number; max?: number; keep?: (value: T) => boolean } = {},
): RecentReads<T> {
  const { ms = 1000, max = 1000, keep = () => true } = opts;
  const seen = new Map<string, { at: number; value: T | undefined }>();
  return {
    async get(key) {
      const hit = seen.get(key);
      if (hit && Date.now() - hit.at < ms) return hit.value;
      const value = await read(key);
      // A miss is read again next time: what is not there yet may be there in a moment.
      if (value !== undefined && keep(value)) {
        if (seen.size > max) seen.clear();
        seen.set(key, { at: Date.now(), value });
      } else seen.delete(key);
      return value;
    },
    forget: (key) => void seen.delete(key),
  };
}
