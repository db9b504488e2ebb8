import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler as awsTraceTask } from "../functions/tasks/agent-trace-ingest.ts";
import { callSocket } from "../infra/local/http-util.ts";
import { servePlatformSocket, TRACES_PATH } from "../infra/local/runtime-socket.ts";
import { localTraceTransport } from "../infra/local/runtime-traces.ts";
import { config } from "../shared/config.ts";
import { egressRules } from "../shared/containment/egress.ts";
import { secretHash } from "../shared/crypto/secret-hash.ts";
import { HttpError } from "../shared/errors.ts";
import {
  type DeploymentRecord,
  deployments,
  type RevisionRecord,
  revisions,
} from "../shared/records/control.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// One trace sink, two transports (shared/agent/tracing/sink.ts): a deployment's runtime sends its traces to the
// AgentTraceIngest task in AWS and to its own socket locally, and is answered the same by both. The contract
// runs against each transport: an untraced deployment's batch is taken and nothing filed (200, not a refusal
// the runtime would retry), a traced one's runs are filed under its project, an oversized batch is a 413.

interface Answer {
  status: number;
  body?: { accepted?: string[]; errors?: unknown[] };
}
type Transport = (d: { id: string; tracing_project_id: string | null }, batch: unknown) => Promise<Answer>;

const tenant = facts.tenant_id;
const token = randomUUID();
const at = new Date().toISOString();

/** A deployment record with a live revision whose runtime token is `token` (what the deploy step stores). */
async function seedDeployment(tracingProjectId: string | null) {
  const id = `trace-sink-${randomUUID().slice(0, 8)}`;
  const revision = `rev-${randomUUID().slice(0, 8)}`;
  await deployments.put({
    id,
    tenant_id: tenant,
    name: id,
    source: "github",
    source_config: {},
    source_revision_config: {},
    secret_names: [],
    latest_revision_id: revision,
    active_revision_id: revision,
    status: "READY",
    tracing_project_id: tracingProjectId,
    created_at: at,
    updated_at: at,
  } as unknown as DeploymentRecord);
  await revisions.put({
    id: revision,
    deployment_id: id,
    tenant_id: tenant,
    status: "DEPLOYED",
    source: "github",
    source_revision_config: {},
    status_history: [],
    runtime_token_hash: secretHash(token),
  } as unknown as RevisionRecord);
  return { id, revision, tracing_project_id: tracingProjectId };
}

const revisionOf = new Map<string, string>();

const aws: Transport = async (d, batch) => {
  try {
    const event = {
      tenant_id: tenant,
      deployment_id: d.id,
      revision_id: revisionOf.get(d.id)!,
      token,
      ...(batch as object),
    };
    return { status: 200, body: (await awsTraceTask(event)) as Answer["body"] };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status };
    throw err;
  }
};

let dir: string;
const sockets: Server[] = [];
const local: Transport = async (d, batch) => {
  const path = join(dir, `${d.id}.sock`);
  if (!sockets.some((s) => s.address() === path)) {
    const refuse = async (_: unknown, res: import("node:http").ServerResponse) =>
      void res.writeHead(404).end();
    sockets.push(
      await servePlatformSocket(path, {
        aws: refuse,
        webhook: refuse,
        traces: localTraceTransport({ tenant_id: tenant, tracing_project_id: d.tracing_project_id }),
        egress: egressRules(),
      }),
    );
  }
  const res = await callSocket(path, "POST", TRACES_PATH, { body: batch });
  return { status: res.status, body: res.status === 200 ? JSON.parse(res.text) : undefined };
};

let projectId: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trace-sink-"));
  const made = await call("POST", "/api/v1/sessions", {
    headers: auth,
    body: { name: `trace-sink-${randomUUID()}` },
  });
  expect(made.status).toBe(200);
  projectId = made.json.id;
});
afterAll(() => {
  for (const s of sockets) s.close();
  rmSync(dir, { recursive: true, force: true });
});

const runPost = (id: string) => ({
  id,
  trace_id: id,
  dotted_order: `20260101T000000000000Z${id}`,
  name: "agent",
  run_type: "chain",
  start_time: new Date().toISOString(),
  inputs: {},
  session_name: "someone-elses-project",
});

describe.each([
  ["AWS task", aws],
  ["local socket", local],
] as const)("the trace sink through the %s", (_name, send) => {
  it("takes an untraced deployment's batch and files nothing (200)", async () => {
    const d = await seedDeployment(null);
    revisionOf.set(d.id, d.revision);
    const answer = await send(d, { posts: [runPost(randomUUID())], patches: [] });
    expect(answer).toEqual({ status: 200, body: { accepted: [], errors: [] } });
  });

  it("files a traced deployment's runs under its own project", async () => {
    const d = await seedDeployment(projectId);
    revisionOf.set(d.id, d.revision);
    const id = randomUUID();
    const answer = await send(d, { posts: [runPost(id)], patches: [] });
    expect(answer.status).toBe(200);
    expect(answer.body?.accepted).toEqual([id]);
  });

  it("refuses a batch over the size cap (413)", async () => {
    const d = await seedDeployment(projectId);
    revisionOf.set(d.id, d.revision);
    const big = { ...runPost(randomUUID()), inputs: { text: "x".repeat(config.agent.traceBodyBytes) } };
    expect((await send(d, { posts: [big], patches: [] })).status).toBe(413);
  });
});
