import { randomUUID } from "node:crypto";
import { Client as AgentClient } from "@langchain/langgraph-sdk";
import { Client } from "langsmith";
import { loadConfig } from "../../shared/config.ts";
import { controlApi, revisionOutcome } from "../../shared/control/api-client.ts";

// What a first deploy should answer, checked from outside with the real langsmith client and plain HTTP:
// every API group's functions load and reach their data under their roles (tables, bucket, key), the trace
// ingestion path stores a run end to end, and the agent API's router authenticates. Read-only but for one
// tracing project (and its run) that it creates and deletes again; given an agent's repository, it also deploys
// it, streams one run through the LangGraph SDK, reads the run's trace back and deletes the deployment.
export interface SmokeTarget {
  /** The platform API's base URL (the ApiUrl output, or the local cloud's). */
  api: string;
  /** The agent API's base URL (the AgentApiUrl output); the platform API when both are one (local cloud). */
  agentApi?: string;
  apiKey: string;
  /** How long to wait for the traced run to be readable. */
  waitMs?: number;
  /**
   * A small agent's repository (AWS_SMOKE_AGENT_REPO: a public https URL; the local cloud also takes a granted
   * folder): deployed, one run streamed, its trace read back, deleted. Unset: those steps are left out.
   */
  agentRepo?: string;
  /** How long its revision may take to be DEPLOYED (a first CodeBuild build takes minutes). */
  deployWaitMs?: number;
}

export interface SmokeCheck {
  check: string;
  ok: boolean;
  ms: number;
  detail: string;
}

const trim = (u: string) => u.replace(/\/+$/, "");

async function http(url: string, apiKey?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers: apiKey ? { "x-api-key": apiKey } : {} });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

export async function smoke(target: SmokeTarget): Promise<SmokeCheck[]> {
  const api = trim(target.api);
  const agentApi = trim(target.agentApi ?? target.api);
  const checks: SmokeCheck[] = [];
  const step = async (check: string, fn: () => Promise<string>) => {
    const t = performance.now();
    try {
      const detail = await fn();
      checks.push({ check, ok: true, ms: Math.round(performance.now() - t), detail });
    } catch (err) {
      checks.push({
        check,
        ok: false,
        ms: Math.round(performance.now() - t),
        detail: String((err as Error).message ?? err),
      });
    }
  };
  const expectStatus = async (url: string, want: number, apiKey?: string) => {
    const { status, body } = await http(url, apiKey);
    if (status !== want) throw new Error(`${url} answered ${status}: ${JSON.stringify(body).slice(0, 200)}`);
    return body;
  };

  await step("health (system group)", async () => {
    await expectStatus(`${api}/ok`, 200);
    return "GET /ok 200";
  });
  await step("server info (platform group)", async () => {
    const info = (await expectStatus(`${api}/api/v1/info`, 200)) as { version?: string };
    return `version ${info.version}`;
  });
  await step("an unknown key is refused", async () => {
    await expectStatus(`${api}/api/v1/sessions`, 401, `lsv2_pt_${randomUUID().replace(/-/g, "")}_0000000000`);
    return "401";
  });

  const client = new Client({ apiUrl: `${api}/api/v1`, apiKey: target.apiKey, autoBatchTracing: false });
  const projectName = `smoke-${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  let projectId: string | undefined;
  await step("create a tracing project (tables, key)", async () => {
    projectId = (await client.createProject({ projectName })).id;
    return projectName;
  });
  const runId = randomUUID();
  await step("trace a run and read it back (ingestion, payloads)", async () => {
    const start = Date.now();
    await client.createRun({
      id: runId,
      name: "smoke",
      run_type: "llm",
      project_name: projectName,
      // Over the 48 KB a run field keeps inline: the inputs go to the bucket, through the key.
      inputs: { messages: [{ role: "user", content: "ping" }], padding: "x".repeat(64_000) },
      start_time: start,
    });
    await client.updateRun(runId, { outputs: { content: "pong" }, end_time: Date.now() });
    const until = Date.now() + (target.waitMs ?? 30_000);
    for (;;) {
      try {
        const run = await client.readRun(runId);
        if (run.end_time && (run.outputs as { content?: string } | undefined)?.content === "pong")
          return `run ${runId} read back with its outputs`;
      } catch (err) {
        if (Date.now() > until) throw err;
      }
      if (Date.now() > until) throw new Error("the run was not readable with its outputs in time");
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  await step("list deployments (control group)", async () => {
    const list = await expectStatus(`${api}/v2/deployments`, 200, target.apiKey);
    return `${(list as { resources?: unknown[] }).resources?.length ?? 0} deployments`;
  });
  await step("list export destinations (export group)", async () => {
    await expectStatus(`${api}/api/v1/bulk-exports/destinations`, 200, target.apiKey);
    return "200";
  });
  await step("agent API router authenticates", async () => {
    const missing = randomUUID();
    await expectStatus(`${agentApi}/agents/${missing}/ok`, 404, target.apiKey);
    return `a deployment that does not exist answers 404`;
  });
  await step("delete the project (purge task invoked)", async () => {
    if (!projectId) throw new Error("no project was created");
    await client.deleteProject({ projectId });
    return projectName;
  });
  if (target.agentRepo)
    await agentSteps({ ...target, api, agentApi, agentRepo: target.agentRepo }, step, client);
  return checks;
}

type Step = (check: string, fn: () => Promise<string>) => Promise<void>;

/** The first deploy's agent: deployed from its repository, one run streamed, its trace read, deleted. */
async function agentSteps(
  target: SmokeTarget & { agentApi: string; agentRepo: string },
  step: Step,
  traces: Client,
) {
  const { apiKey } = target;
  const control = controlApi(target.api, apiKey);
  type Deployment = { id: string; latest_revision_id: string; tracing_project_id: string | null };
  let d: Deployment | undefined;
  await step("deploy an agent from its repository (build, deploy)", async () => {
    d = await control<Deployment>(
      "POST",
      "/v2/deployments",
      {
        name: `smoke-agent-${randomUUID().slice(0, 8)}`,
        source: "github",
        source_config: { repo_url: target.agentRepo },
        source_revision_config: { langgraph_config_path: "langgraph.json" },
      },
      201,
    );
    const { status, lines } = await revisionOutcome(control, d.id, d.latest_revision_id, {
      timeoutMs: target.deployWaitMs ?? 30 * 60_000,
      pollMs: 2000,
    });
    if (status !== "DEPLOYED")
      throw new Error(`the revision ended ${status}:\n${lines.slice(-8).join("\n")}`);
    return `deployment ${d.id} DEPLOYED`;
  });
  let runId: string | undefined;
  await step("stream a run through the LangGraph SDK (router, runtime)", async () => {
    if (!d) throw new Error("no deployment");
    const agent = new AgentClient({ apiUrl: `${target.agentApi}/agents/${d.id}`, apiKey });
    const [assistant] = await agent.assistants.search({ limit: 1 });
    if (!assistant) throw new Error("the deployment serves no assistant");
    const events: string[] = [];
    for await (const part of agent.runs.stream(null, assistant.assistant_id, {
      input: { messages: [{ role: "user", content: "ping" }] },
      streamMode: "values",
    })) {
      events.push(part.event);
      if (part.event === "metadata") runId = (part.data as { run_id?: string }).run_id;
      if (part.event === "error")
        throw new Error(`the run failed: ${JSON.stringify(part.data).slice(0, 300)}`);
    }
    if (!runId || !events.includes("values"))
      throw new Error(`no run streamed its values: ${events.join(", ")}`);
    return `run ${runId} of ${assistant.graph_id}: ${events.length} events`;
  });
  await step("read the run's trace back (trace sink, ingestion)", async () => {
    if (!d?.tracing_project_id || !runId) throw new Error("no traced run");
    const until = Date.now() + (target.waitMs ?? 60_000);
    for (;;) {
      for await (const run of traces.listRuns({ projectId: d.tracing_project_id, isRoot: true, limit: 20 }))
        if (run.end_time) return `${run.name} (${run.id}) in project ${d.tracing_project_id}`;
      if (Date.now() > until) throw new Error("no finished root run in the deployment's project in time");
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
  await step("delete the agent's deployment and its project", async () => {
    if (!d) throw new Error("no deployment");
    await control("DELETE", `/v2/deployments/${d.id}?delete_tracing_project=true`, undefined, 204);
    return d.id;
  });
}

/** npm run aws:smoke -- <ApiUrl> [AgentApiUrl]   (API key in AGENT_PLATFORM_API_KEY or LANGSMITH_API_KEY) */
async function main() {
  const [api, agentApi] = process.argv.slice(2);
  const config = loadConfig();
  const apiKey = config.cliApiKey;
  if (!api || !apiKey) {
    console.error("usage: AGENT_PLATFORM_API_KEY=<key> npm run aws:smoke -- <ApiUrl> [AgentApiUrl]");
    process.exit(2);
  }
  if (!config.smokeAgentRepo)
    console.log(
      "(AWS_SMOKE_AGENT_REPO unset: no agent is deployed; set it to a public https repository of one)",
    );
  const checks = await smoke({ api, agentApi, apiKey, agentRepo: config.smokeAgentRepo });
  for (const c of checks)
    console.log(
      `${c.ok ? "ok  " : "FAIL"} ${c.check.padEnd(52)} ${String(c.ms).padStart(6)} ms  ${c.detail}`,
    );
  process.exit(checks.every((c) => c.ok) ? 0 : 1);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
