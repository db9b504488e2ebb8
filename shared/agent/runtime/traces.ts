import { ingestBatch } from "../../runs/ingest.ts";
import type { IngestResult } from "../../runs/store.ts";

// Traces a deployment's runtime sends to the platform (after the platform checked the runtime's token): filed
// under the deployment's own tracing project whatever project the runs name, so a runtime can trace into its
// project only, and never touch a run of another project (refused in the result). Runs go through the platform's
// ordinary ingestion (idempotent on run ids).
export function ingestDeploymentTraces(
  tenantId: string,
  projectId: string,
  posts: unknown[],
  patches: { id: string; body: unknown }[],
): Promise<IngestResult> {
  const own = (run: unknown) => {
    const { session_name: _name, ...rest } = (run ?? {}) as Record<string, unknown>;
    return { ...rest, session_id: projectId };
  };
  return ingestBatch(
    tenantId,
    posts.map(own),
    patches.map((p) => ({ id: p.id, body: own(p.body) })),
    projectId,
  );
}
