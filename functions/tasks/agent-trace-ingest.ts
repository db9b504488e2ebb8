import { acceptRuntimeTraces } from "../../shared/agent/tracing/sink.ts";
import { secretMatches } from "../../shared/crypto/secret-hash.ts";
import { Forbidden } from "../../shared/errors.ts";
import { deployments, revisions } from "../../shared/records/control.ts";
import { defineTask } from "../task-manifest.ts";

// The AWS transport of the trace sink (shared/agent/tracing/sink.ts): a deployment's runtime function invokes
// it synchronously; the token proves which revision's runtime sent the batch (its hash was stored on the revision
// at deploy), and the answer is the sink's, as a local runtime's socket answers it.
interface TraceBatch {
  tenant_id: string;
  deployment_id: string;
  revision_id: string;
  token: string;
  posts?: unknown[];
  patches?: { id: string; body: unknown }[];
}

export const handler = defineTask("AgentTraceIngest", async (event: TraceBatch) => {
  const revision = await revisions.get({
    tenant: event.tenant_id,
    deployment: event.deployment_id,
    id: event.revision_id,
  });
  const expected = revision?.runtime_token_hash;
  if (!secretMatches(String(event.token ?? ""), expected)) throw new Forbidden("Unknown runtime");
  const d = await deployments.get({ tenant: event.tenant_id, id: event.deployment_id });
  return acceptRuntimeTraces(event.tenant_id, d?.tracing_project_id, event);
});
