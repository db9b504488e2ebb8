import type { LocalFacts } from "../infra/local/cloud.ts";
import { processCustomerS3 } from "./customer-s3.ts";
import { newBucket } from "./export.ts";
import { type FakeServer, fakeServer } from "./fake-http.ts";
import { callAt } from "./http.ts";
import { deployRepo, gitRepo, graphRepoFiles } from "./repos.ts";
import type { FuzzIds } from "./route-fuzz.ts";

// The real resources the route fuzz aims at: one of each family, made once, so requests with a real id reach
// the handlers' work rather than stopping at a 404. A resource that cannot be made is left out (its routes
// then meet only bad ids) and named in `missing`.
type Platform = Pick<LocalFacts, "base_url" | "api_key" | "tenant_id" | "s3">;

export interface FuzzFixtures {
  ids: FuzzIds;
  missing: string[];
  close(): Promise<void>;
}

type Make = (
  name: string,
  method: string,
  path: string,
  body: unknown,
  pick?: (j: any) => unknown,
) => Promise<string | undefined>;
interface Ctx {
  call: ReturnType<typeof callAt>;
  headers: Record<string, string>;
  ids: FuzzIds;
  missing: string[];
  make: Make;
}

/** A destination on the workspace's own S3 (the platform's is refused as one), an export and its first run. */
async function exportFixtures(
  { call, headers, ids, missing, make }: Ctx,
  session: string | undefined,
  now: string,
) {
  const store = await processCustomerS3();
  const bucket = await newBucket(store, "fuzz");
  const destination = await make("destination_id", "POST", "/api/v1/bulk-exports/destinations", {
    destination_type: "s3",
    display_name: "fuzz",
    config: { bucket_name: bucket, prefix: "fuzz", endpoint_url: store.s3.endpoint },
    credentials: { access_key_id: store.s3.access_key_id, secret_access_key: store.s3.secret_access_key },
  });
  const exportId = await make("export_id", "POST", "/api/v1/bulk-exports", {
    bulk_export_destination_id: destination,
    session_id: session,
    start_time: new Date(Date.now() - 86_400_000).toISOString(),
    end_time: now,
  });
  if (exportId) {
    for (let i = 0; i < 50 && !ids.export_run_id; i++) {
      const r = await call("GET", `/api/v1/bulk-exports/${exportId}/runs`, { headers });
      const first = Array.isArray(r.json) ? r.json[0] : r.json?.runs?.[0];
      if (first?.id) ids.export_run_id = first.id;
      else await new Promise((res) => setTimeout(res, 100));
    }
    if (!ids.export_run_id) missing.push("export_run_id");
  }
}

/** The deployment's assistant, a thread with a finished run and its checkpoint, and a cron. */
async function agentFixtures({ call, headers, make }: Ctx, deploymentId: string) {
  const agent = (p: string) => `/agents/${deploymentId}${p}`;
  const assistant = await make(
    "assistant_id",
    "POST",
    agent("/assistants/search"),
    {},
    (j) => j?.[0]?.assistant_id,
  );
  const thread = await make(
    "thread_id",
    "POST",
    agent("/threads"),
    { metadata: { fuzz: true } },
    (j) => j?.thread_id,
  );
  await call("POST", agent(`/threads/${thread}/runs/wait`), {
    headers,
    body: { assistant_id: assistant, input: { text: "hi" } },
  });
  await make("agent_run_id", "GET", agent(`/threads/${thread}/runs`), undefined, (j) => j?.[0]?.run_id);
  await make(
    "checkpoint_id",
    "GET",
    agent(`/threads/${thread}/state`),
    undefined,
    (j) => j?.checkpoint?.checkpoint_id,
  );
  await make(
    "cron_id",
    "POST",
    agent("/runs/crons"),
    { assistant_id: assistant, schedule: "0 0 1 1 *", input: { text: "cron" } },
    (j) => j?.cron_id,
  );
}

export async function fuzzFixtures(facts: Platform): Promise<FuzzFixtures> {
  const call = callAt(facts.base_url);
  const headers = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };
  const ids: FuzzIds = {};
  const missing: string[] = [];
  const make: Make = async (name, method, path, body, pick = (j: any) => j?.id) => {
    const r = await call(method, path, { headers, body });
    const id = r.status < 300 ? pick(r.json) : undefined;
    if (typeof id === "string") ids[name] = id;
    else missing.push(`${name} (${method} ${path} → ${r.status} ${r.text.slice(0, 200)})`);
    return id as string | undefined;
  };
  const ctx: Ctx = { call, headers, ids, missing, make };
  const api: FakeServer = await fakeServer(() => ({
    status: 200,
    body: { total_count: 0, repositories: [] },
  }));
  const repo = gitRepo(graphRepoFiles(["a", "b"]));
  const deploying = deployRepo(repo.dir, "fuzz", call, headers);

  const session = await make("session_id", "POST", "/api/v1/sessions", {
    name: `fuzz-${crypto.randomUUID()}`,
  });
  const runId = crypto.randomUUID();
  const now = new Date().toISOString();
  await make("trace_run_id", "POST", "/api/v1/runs", {
    id: runId,
    name: "fuzz",
    run_type: "chain",
    start_time: now,
    session_id: session,
    inputs: { q: "hi" },
  });
  await make("id", "POST", "/api/v1/model-price-map", {
    name: "fuzz-model",
    match_pattern: "^fuzz-model$",
    prompt_cost: 0.000001,
    completion_cost: 0.000002,
  });
  await exportFixtures(ctx, session, now);
  await make("listener_id", "POST", "/v2/listeners", { compute_id: "fuzz" });
  await make("integration_id", "POST", "/v1/integrations/github", {
    name: "fuzz",
    access_token: "fuzz-token",
    api_url: api.url,
  });
  await make(
    "provider_id",
    "POST",
    "/v2/auth/providers",
    {
      provider_id: `fuzz-${crypto.randomUUID().slice(0, 8)}`,
      name: "Fuzz",
      client_id: "client-1",
      client_secret: "secret",
      auth_url: `${api.url}/authorize`,
      token_url: `${api.url}/token`,
    },
    (j) => j?.provider_id,
  );

  const { deploymentId, revisionId } = await deploying;
  ids.deployment_id = deploymentId;
  ids.revision_id = revisionId;
  await agentFixtures(ctx, deploymentId);
  ids.name = "agent";
  return {
    ids,
    missing,
    close: async () => {
      await api.close();
      repo.remove();
    },
  };
}
