import type { ArtifactManifest } from "../../build/bundle.ts";
import { artifactManifest, type RuntimeArtifact } from "./artifact.ts";

// langgraph.json's `checkpointer.ttl` and `store.ttl` as a deployment's runtime applies them, read from the
// manifest of the revision it serves. Platform processes (sweepers, cron ticks) serve no artifact: no defaults.
// `sweep_interval_minutes` needs nothing here: expired threads are swept every minute (cleanup/thread-ttl.ts) and every
// store read skips an expired item at once (store.ts), which is at least as often as any interval allows.

export type TtlSettings = NonNullable<ArtifactManifest["ttl"]>;

/** The TTL settings of the revision a runtime serves (empty outside a runtime: no artifact). */
export async function ttlSettings(artifact: RuntimeArtifact | undefined): Promise<TtlSettings> {
  return (await artifactManifest(artifact))?.ttl ?? {};
}

/** Minutes a thread created without its own `ttl` lives (checkpointer.ttl.default_ttl), if set. */
export const threadDefaultTtl = async (artifact: RuntimeArtifact | undefined): Promise<number | undefined> =>
  (await ttlSettings(artifact)).threads?.default_ttl;

/** store.ttl: minutes an item put without a `ttl` lives, and whether reads refresh TTLs (default: they do). */
export async function storeTtl(
  artifact: RuntimeArtifact | undefined,
): Promise<{ default_ttl?: number; refresh_on_read: boolean }> {
  const s = (await ttlSettings(artifact)).store;
  return { default_ttl: s?.default_ttl, refresh_on_read: s?.refresh_on_read !== false };
}
