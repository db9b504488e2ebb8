import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { Client as TraceClient } from "langsmith";
import type { LocalFacts } from "../infra/local/cloud.ts";
import { agentClient } from "./agents.ts";
import { processCustomerS3 } from "./customer-s3.ts";
import { s3For, waitFor } from "./export.ts";
import { type FakeServer, fakeServer } from "./fake-http.ts";
import { callAt } from "./http.ts";
import { deployRepo, gitRepo, graphRepoFiles } from "./repos.ts";

// Data in every resource family for the isolation sweep (issue 16, item 2): per workspace a tracing project
// with runs (through the real langsmith Client), a destination with credentials and an export, a price map
// entry, a listener, an integration, an OAuth provider with a token; and two deployments (with secrets), each
// with an assistant, a thread with a run, a cron and a store item. Every name carries its owner's marker, so
// an answer that shows another owner's data is caught even where no id appears.
export interface Workspace {
  tenant: string;
  apiKey: string;
  headers: Record<string, string>;
}

export interface DeploymentData {
  marker: string;
  deployment_id: string;
  revision_id: string;
  assistant_id: string;
  thread_id: string;
  agent_run_id: string;
  checkpoint_id: string;
  cron_id: string;
  store_namespace: string[];
  store_key: string;
}

export interface WorkspaceData {
  ws: Workspace;
  marker: string;
  /** The workspace's ids by path parameter name (`run_id` split by the API it belongs to). */
  ids: Record<string, string>;
  deployments: [DeploymentData, DeploymentData];
  /** Values no answer and no log line may hold. */
  secrets: string[];
  /** Values an answer may hand to their owner (an OAuth access token), but no log line may hold. */
  logOnlySecrets: string[];
}

const rand = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);
const ONCE_A_YEAR = "0 0 1 1 *";

/** Deploys two small graphs per workspace (all four at once) and seeds every resource family. */
export async function seedIsolation(
  facts: Pick<LocalFacts, "base_url" | "s3">,
  workspaces: [Workspace, Workspace],
): Promise<{ data: [WorkspaceData, WorkspaceData]; close: () => Promise<void> }> {
  const base = facts.base_url;
  const repo = gitRepo(graphRepoFiles(["step"]));
  const idp = await tokenEndpoint();
  try {
    const secretsOf = workspaces.map(() => [`dep-secret-${rand()}`, `dep-secret-${rand()}`]);
    // Each deployment gets its agent data as soon as it is deployed.
    const agentData = workspaces.flatMap((ws, w) =>
      secretsOf[w].map((value, d) =>
        deployRepo(repo.dir, `iso-${w}${d}`, callAt(base), ws.headers, [{ name: "ISO_SECRET", value }]).then(
          (deployed) => seedDeployment(base, ws, deployed),
        ),
      ),
    );
    const [control, deployments] = await Promise.all([
      Promise.all(workspaces.map((ws) => seedWorkspace(facts, ws, idp))),
      Promise.all(agentData),
    ]);
    const data = workspaces.map((ws, w): WorkspaceData => {
      const own: [DeploymentData, DeploymentData] = [deployments[w * 2], deployments[w * 2 + 1]];
      return {
        ...control[w],
        ids: { ...control[w].ids, deployment_id: own[0].deployment_id, revision_id: own[0].revision_id },
        deployments: own,
        secrets: [...control[w].secrets, ...secretsOf[w], ws.apiKey],
      };
    }) as [WorkspaceData, WorkspaceData];
    return { data, close: () => idp.close() };
  } finally {
    repo.remove();
  }
}

/** A token endpoint that issues fresh tokens with a unique refresh token each. */
function tokenEndpoint(): Promise<FakeServer> {
  return fakeServer((req) => {
    if (req.path.endsWith("/repositories"))
      return { status: 200, body: { total_count: 0, repositories: [] } };
    return {
      status: 200,
      body: {
        access_token: `at-${rand()}`,
        refresh_token: `rt-secret-${rand()}`,
        token_type: "bearer",
        expires_in: 3600,
      },
    };
  });
}

async function ok(r: Promise<{ status: number; text: string; json: any }>, what: string) {
  const got = await r;
  if (got.status >= 300) throw new Error(`${what} answered ${got.status}: ${got.text}`);
  return got.json;
}

type Caller = (method: string, path: string, body?: unknown) => Promise<any>;
const callerFor = (base: string, ws: Workspace): Caller => {
  const call = callAt(base);
  return (method, path, body) => ok(call(method, path, { headers: ws.headers, body }), `${method} ${path}`);
};

/** Two runs traced through the real SDK (their project is created by the first of them), once stored. */
async function tracedRuns(base: string, ws: Workspace, marker: string) {
  const call = callAt(base);
  const as = callerFor(base, ws);
  const project = `proj-${marker}`;
  const tracer = new TraceClient({
    apiUrl: `${base}/api/v1`,
    apiKey: ws.apiKey,
    autoBatchTracing: false,
  });
  const runIds = [crypto.randomUUID(), crypto.randomUUID()];
  for (const id of runIds) {
    await tracer.createRun({
      id,
      name: `chain-${marker}`,
      run_type: "chain",
      inputs: { question: `asked by ${marker}` },
      project_name: project,
      start_time: Date.now(),
    });
    await tracer.updateRun(id, { outputs: { answer: `answered to ${marker}` }, end_time: Date.now() });
  }
  await waitFor(
    "the runs to be stored",
    async () => (await call("GET", `/api/v1/runs/${runIds[1]}`, { headers: ws.headers })).status === 200,
    20_000,
  );
  const session = (await as("GET", `/api/v1/sessions?name=${project}`))[0];
  return { session, runIds };
}

/** A destination in the workspace's own S3, one refused for keys the S3 does not know, and an export's runs. */
async function exportToOwnS3(
  base: string,
  ws: Workspace,
  marker: string,
  sessionId: string,
  { destSecret, refusedSecret }: { destSecret: string; refusedSecret: string },
) {
  const call = callAt(base);
  const as = callerFor(base, ws);
  const bucket = `iso-${rand()}`;
  // The workspace's own S3: the platform's is refused as a destination.
  const store = await processCustomerS3();
  await s3For(store).send(new CreateBucketCommand({ Bucket: bucket }));
  const destination = await as("POST", "/api/v1/bulk-exports/destinations", {
    destination_type: "s3",
    display_name: `dest-${marker}`,
    config: { bucket_name: bucket, prefix: marker, endpoint_url: store.s3.endpoint },
    // The S3 checks the key pair; the session token is this workspace's own secret.
    credentials: {
      access_key_id: store.s3.access_key_id,
      secret_access_key: store.s3.secret_access_key,
      session_token: destSecret,
    },
  });
  // A destination whose write test fails (a key the local S3 does not know): a path that logs.
  const refused = await call("POST", "/api/v1/bulk-exports/destinations", {
    headers: ws.headers,
    body: {
      destination_type: "s3",
      display_name: `refused-${marker}`,
      config: { bucket_name: bucket, prefix: marker, endpoint_url: store.s3.endpoint },
      credentials: {
        access_key_id: `AKIA${marker}`,
        secret_access_key: refusedSecret,
        session_token: refusedSecret,
      },
    },
  });
  if (refused.status !== 400) throw new Error(`a destination with unknown keys answered ${refused.status}`);
  const now = Date.now();
  const exported = await as("POST", "/api/v1/bulk-exports", {
    bulk_export_destination_id: destination.id,
    session_id: sessionId,
    start_time: new Date(now - 3_600_000).toISOString(),
    end_time: new Date(now + 60_000).toISOString(),
  });
  let exportRuns: { id: string }[] = [];
  await waitFor(
    "the export's runs",
    async () => {
      exportRuns = await as("GET", `/api/v1/bulk-exports/${exported.id}/runs`);
      return exportRuns.length > 0;
    },
    20_000,
  );
  return { destination, exported, exportRuns };
}

/** An OAuth provider and a token from a completed authorization-code flow. */
async function oauthToken(
  base: string,
  ws: Workspace,
  idp: FakeServer,
  marker: string,
  clientSecret: string,
) {
  const call = callAt(base);
  const as = callerFor(base, ws);
  const provider = await as("POST", "/v2/auth/providers", {
    provider_id: `prov-${marker}`,
    name: `provider-${marker}`,
    client_id: `client-${marker}`,
    client_secret: clientSecret,
    auth_url: "https://idp.example.com/authorize",
    token_url: `${idp.url}/token`,
    uses_pkce: true,
    token_endpoint_auth_method: "client_secret_basic",
    scopes: ["repo"],
  });
  const flow = await as("POST", "/v2/auth/authenticate", { provider: provider.provider_id });
  const state = new URL(flow.url).searchParams.get("state") ?? "";
  await ok(
    call("GET", `/v2/auth/callback/${provider.provider_id}?${new URLSearchParams({ code: "c", state })}`),
    "the OAuth callback",
  );
  const token = await as("GET", `/v2/auth/wait/${flow.auth_id}?timeout=10`);
  const issued = idp.seen.filter((s) => s.path === "/token").length;
  if (token.status !== "completed" || issued === 0) throw new Error(`no token: ${JSON.stringify(token)}`);
  return { provider, flow, token };
}

async function seedWorkspace(
  facts: Pick<LocalFacts, "base_url" | "s3">,
  ws: Workspace,
  idp: FakeServer,
): Promise<Omit<WorkspaceData, "deployments">> {
  const marker = `mk${rand()}`;
  const as = callerFor(facts.base_url, ws);
  const secrets = [
    `dest-secret-${rand()}`,
    `gh-token-${rand()}`,
    `client-secret-${rand()}`,
    `refused-secret-${rand()}`,
    `webhook-secret-${rand()}`,
  ];
  const [destSecret, ghToken, clientSecret, refusedSecret, webhookSecret] = secrets;

  const { session, runIds } = await tracedRuns(facts.base_url, ws, marker);

  const { destination, exported, exportRuns } = await exportToOwnS3(facts.base_url, ws, marker, session.id, {
    destSecret,
    refusedSecret,
  });

  const feedback = await as("POST", "/api/v1/feedback", {
    run_id: runIds[0],
    key: `key-${marker}`,
    score: 1,
    comment: `feedback-${marker}`,
  });

  const price = await as("POST", "/api/v1/model-price-map", {
    name: `price-${marker}`,
    match_pattern: `^${marker}$`,
    provider: "acme",
    prompt_cost: 0.000002,
    completion_cost: 0.000003,
    start_time: null,
  });
  const listener = await as("POST", "/v2/listeners", { compute_id: `cluster-${marker}` });
  const integration = await as("POST", "/v1/integrations/github", {
    name: `gh-${marker}`,
    access_token: ghToken,
    webhook_secret: webhookSecret,
    api_url: idp.url,
    installation_id: 7,
  });

  const { provider, flow, token } = await oauthToken(facts.base_url, ws, idp, marker, clientSecret);
  // The workspace's own key, by its id (the sweep tries to revoke it with the other workspace's key).
  const keys = (await as("GET", "/api/v1/api-key")) as { id: string; short_key: string }[];
  const apiKeyId = keys.find((k) => ws.apiKey.startsWith(k.short_key))?.id;
  if (!apiKeyId) throw new Error("the workspace's API key is not listed");

  return {
    ws,
    marker,
    ids: {
      session_id: session.id,
      trace_run_id: runIds[0],
      feedback_id: feedback.id,
      destination_id: destination.id,
      export_id: exported.id,
      export_run_id: exportRuns[0].id,
      id: price.id,
      listener_id: listener.id,
      integration_id: integration.id,
      provider_id: provider.provider_id,
      auth_id: flow.auth_id,
      token_id: token.token_id,
      api_key_id: apiKeyId,
    },
    secrets,
    logOnlySecrets: [token.token],
  };
}

async function seedDeployment(
  base: string,
  ws: Workspace,
  deployed: { deploymentId: string; revisionId: string },
): Promise<DeploymentData> {
  const marker = `mk${rand()}`;
  const client = agentClient(
    { base_url: base, api_key: ws.apiKey, tenant_id: ws.tenant },
    deployed.deploymentId,
  );
  const assistant = await client.assistants.create({
    graphId: "agent",
    name: `assistant-${marker}`,
    metadata: { owner: marker },
  });
  const thread = await client.threads.create({ metadata: { owner: marker } });
  const run = await client.runs.create(thread.thread_id, assistant.assistant_id, {
    input: { text: marker },
  });
  await client.runs.join(thread.thread_id, run.run_id);
  const state = await client.threads.getState(thread.thread_id);
  const cron = await client.crons.createForThread(thread.thread_id, assistant.assistant_id, {
    schedule: ONCE_A_YEAR,
    input: { text: marker },
  });
  const namespace = [`ns-${marker}`, "notes"];
  const key = `key-${marker}`;
  await client.store.putItem(namespace, key, { note: `kept by ${marker}` });
  return {
    marker,
    deployment_id: deployed.deploymentId,
    revision_id: deployed.revisionId,
    assistant_id: assistant.assistant_id,
    thread_id: thread.thread_id,
    agent_run_id: run.run_id,
    checkpoint_id: state.checkpoint.checkpoint_id ?? "",
    cron_id: cron.cron_id,
    store_namespace: namespace,
    store_key: key,
  };
}
