import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

// A bound on what a build writes to the host (issue 33, the second review's low (b)): its folders are binds of host
// folders (bubblewrap here has no overlay to cap), so nothing but this stops a build from filling the host's disk
// through them. The watchdog measures the space the folders take — allocated blocks, so a sparse file counts for
// what it really holds — every few seconds, each against its size at the start (the workspace's dependency cache
// is not empty), and says so once their growth passes the bound.

/** Allocated bytes below `path` (links not followed), stopping early once past `stopAt`. */
export async function allocatedBytes(path: string, stopAt = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const walk = async (p: string): Promise<void> => {
    if (total > stopAt) return;
    const st = await lstat(p).catch(() => undefined);
    if (!st) return;
    total += st.blocks * 512;
    if (!st.isDirectory()) return;
    const names = await readdir(p).catch(() => [] as string[]);
    for (const n of names) await walk(join(p, n));
  };
  await walk(path);
  return total;
}

export interface WriteWatchdog {
  /** Stops measuring; resolves once a measurement under way ended. */
  stop(): Promise<void>;
  /** How much the folders grew since the start, measured now (a build that wrote fast and ended between checks). */
  grown(): Promise<number>;
}

/**
 * Measures `folders` every `everyMs` and calls `over` once (with the growth measured) when, together, they grew by
 * more than `maxBytes` since the watchdog started.
 */
export async function watchWrites(
  folders: string[],
  maxBytes: number,
  over: (grown: number) => void,
  everyMs = 5000,
): Promise<WriteWatchdog> {
  const start = await Promise.all(folders.map((f) => allocatedBytes(f)));
  const base = start.reduce((a, b) => a + b, 0);
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const size = async () => {
    let now = 0;
    for (const f of folders) now += await allocatedBytes(f, base + maxBytes - now);
    return now;
  };
  const measure = async () => {
    const now = await size();
    if (!stopped && now - base > maxBytes) {
      stopped = true;
      clearInterval(timer);
      over(now - base);
    }
  };
  const timer = setInterval(() => {
    running = running.then(measure).catch(() => {});
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
    grown: async () => (await size()) - base,
  };
}
