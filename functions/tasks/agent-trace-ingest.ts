import { ingestDeploymentTraces } from "../../shared/agent/runtime/traces.ts";
import { config } from "../../shared/config.ts";
import { secretMatches } from "../../shared/crypto/secret-hash.ts";
import { Forbidden, PayloadTooLarge } from "../../shared/errors.ts";
import { deployments, revisions } from "../../shared/records/control.ts";
import { defineTask } from "../task-manifest.ts";

// Traces of a deployment's runtime function (AWS), invoked by it synchronously: the token proves which
// revision's runtime sent them (its hash was stored on the revision at deploy), and the runs are filed under
// that deployment's tracing project only.
interface TraceBatch {
  tenant_id: string;
  deployment_id: string;
  revision_id: string;
  token: string;
  posts?: unknown[];
  patches?: { id: string; body: unknown }[];
}

export const handler = defineTask("AgentTraceIngest", async (event: TraceBatch) => {
  // The same cap the platform socket puts on a local runtime's trace call (Lambda's own 6 MB is above it).
  const bytes = Buffer.byteLength(JSON.stringify([event.posts ?? [], event.patches ?? []]));
  if (bytes > config.agent.traceBodyBytes) throw new PayloadTooLarge(config.agent.traceBodyBytes);
  const revision = await revisions.get({
    tenant: event.tenant_id,
    deployment: event.deployment_id,
    id: event.revision_id,
  });
  const expected = revision?.runtime_token_hash;
  if (!secretMatches(String(event.token ?? ""), expected)) throw new Forbidden("Unknown runtime");
  const d = await deployments.get({ tenant: event.tenant_id, id: event.deployment_id });
  if (!d?.tracing_project_id) return { accepted: [], errors: [] };
  return ingestDeploymentTraces(
    event.tenant_id,
    d.tracing_project_id,
    event.posts ?? [],
    event.patches ?? [],
  );
});
