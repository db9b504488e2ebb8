import { config } from "../../config.ts";
import { PayloadTooLarge } from "../../errors.ts";
import { ingestBatch } from "../../runs/ingest.ts";
import type { IngestResult } from "../../runs/store.ts";

// The trace sink: what the platform answers a deployment's runtime for its traces, whichever transport brought
// them — in AWS the AgentTraceIngest task (functions/tasks/agent-trace-ingest.ts), which checks the runtime's
// token against its revision; locally the runtime's own socket (infra/local/runtime-traces.ts), which knows who
// calls. Each transport proves which deployment sent the batch and finds its tracing project; the answer is this
// one's:
// - a batch larger than AGENT_TRACE_BODY_BYTES → 413;
// - an untraced deployment (tracing off, perhaps switched off while its runtime ran) → 200, nothing filed: the
//   runtime did nothing wrong and must not retry;
// - else the runs are filed under the deployment's own tracing project whatever project they name, so a runtime
//   traces into its project only and never touches a run of another project (refused in the result). Runs go
//   through the platform's ordinary ingestion (idempotent on run ids).

export interface RuntimeTraceBatch {
  posts?: unknown[];
  patches?: { id: string; body: unknown }[];
}

/** What the runtime is answered for a batch of its deployment's traces (`projectId`: its tracing project). */
export async function acceptRuntimeTraces(
  tenantId: string,
  projectId: string | null | undefined,
  batch: RuntimeTraceBatch,
): Promise<IngestResult> {
  const posts = batch.posts ?? [];
  const patches = batch.patches ?? [];
  const cap = config.agent.traceBodyBytes;
  if (Buffer.byteLength(JSON.stringify([posts, patches])) > cap) throw new PayloadTooLarge(cap);
  if (!projectId) return { accepted: [], errors: [] };
  return ingestDeploymentTraces(tenantId, projectId, posts, patches);
}

function ingestDeploymentTraces(
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
