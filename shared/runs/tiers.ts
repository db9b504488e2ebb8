import { batchGet } from "../aws/batch.ts";
import { conditionalUpdate, putItem, queryPages } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { isRunOf, type TraceRunItem, type TraceTier, traceRunKeys } from "../records/runs.ts";
import { type IndexEntry, presentItems } from "./index-read.ts";

// Retention tiers (the hosted platform's `shortlived` and `longlived`). A run takes its project's tier when it
// is ingested and expires (DynamoDB TTL, attribute expires_at) that tier's retention after its ingestion. A
// trace given feedback is upgraded: a tier record in the root run's partition says so (runs posted later
// read it), and every run of the trace already stored moves to longlived. Each side writes first and reads
// the other after — an upgrade writes the record then reads the trace; a post writes its runs then reads the
// records — so a run posted during an upgrade is not left short-lived.
const DAY = 86_400;

/** When a run ingested at `receivedAt` expires under `tier` (epoch seconds). */
export const runExpiry = (receivedAt: string, tier: TraceTier): number =>
  Math.floor(Date.parse(receivedAt) / 1000) + config.runs.tierDays(tier) * DAY;

/** When a record kept beside runs expires: the long-lived retention from now (it outlives any of its runs). */
export const recordExpiry = (): number =>
  Math.floor(Date.now() / 1000) + config.runs.tierDays("longlived") * DAY;

/** Sets a stored run long-lived (no-op for a run that is gone or already long-lived). */
function promoteRun(tenant: string, runId: string, receivedAt: string): Promise<boolean> {
  return conditionalUpdate("runs", traceRunKeys.run(tenant, runId), {
    set: { trace_tier: "longlived", expires_at: runExpiry(receivedAt, "longlived") },
    notIn: { trace_tier: ["longlived"] },
  });
}

/** Upgrades a trace to the long-lived tier: the tier record first, then every run of the trace stored so far. */
export async function upgradeTrace(tenant: string, traceId: string): Promise<number> {
  await putItem("runs", {
    ...traceRunKeys.tier(tenant, traceId),
    tenant_id: tenant,
    trace_id: traceId,
    trace_tier: "longlived",
    expires_at: recordExpiry(),
  });
  let promoted = 0;
  for await (const entries of queryPages<IndexEntry & { id?: string }>("runs", {
    IndexName: "GSI2",
    KeyConditionExpression: "GSI2PK = :pk",
    values: { ":pk": traceRunKeys.trace(tenant, traceId) },
  })) {
    // The index holds keys and ids: the tier and receipt time come from the table.
    const items = await presentItems<Pick<TraceRunItem, "PK" | "SK" | "id" | "received_at" | "trace_tier">>(
      entries.filter(isRunOf(tenant)),
      ["id", "received_at", "trace_tier"],
    );
    const short = items.filter((i) => i.trace_tier === "shortlived" && isRunOf(tenant)(i));
    await Promise.all(short.map((i) => promoteRun(tenant, i.id, i.received_at)));
    promoted += short.length;
  }
  return promoted;
}

/** After a post: its short-lived runs whose trace was upgraded meanwhile become long-lived. */
export async function promoteUpgradedTraces(
  tenant: string,
  runs: Pick<TraceRunItem, "id" | "trace_id" | "received_at" | "trace_tier">[],
): Promise<void> {
  const short = runs.filter((r) => r.trace_tier === "shortlived");
  if (!short.length) return;
  const traces = [...new Set(short.map((r) => r.trace_id))];
  const upgraded = new Set(
    (
      await batchGet<{ trace_id: string }>(
        "runs",
        traces.map((t) => traceRunKeys.tier(tenant, t)),
        { projection: "trace_id" },
      )
    ).map((r) => r.trace_id),
  );
  await Promise.all(
    short.filter((r) => upgraded.has(r.trace_id)).map((r) => promoteRun(tenant, r.id, r.received_at)),
  );
}
