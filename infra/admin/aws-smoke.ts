import { randomUUID } from "node:crypto";
import { Client } from "langsmith";
import { loadConfig } from "../../shared/config.ts";

// What a first deploy should answer, checked from outside with the real langsmith client and plain HTTP:
// every API group's functions load and reach their data under their roles (tables, bucket, key), the trace
// ingestion path stores a run end to end, and the agent API's router authenticates. Read-only but for one
// tracing project (and its run) that it creates and deletes again.
export interface SmokeTarget {
  /** The platform API's base URL (the ApiUrl output, or the local cloud's). */
  api: string;
  /** The agent API's base URL (the AgentApiUrl output); the platform API when both are one (local cloud). */
  agentApi?: string;
  apiKey: string;
  /** How long to wait for the traced run to be readable. */
  waitMs?: number;
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
  return checks;
}

/** npm run aws:smoke -- <ApiUrl> [AgentApiUrl]   (API key in AGENT_PLATFORM_API_KEY or LANGSMITH_API_KEY) */
async function main() {
  const [api, agentApi] = process.argv.slice(2);
  const apiKey = loadConfig().cliApiKey;
  if (!api || !apiKey) {
    console.error("usage: AGENT_PLATFORM_API_KEY=<key> npm run aws:smoke -- <ApiUrl> [AgentApiUrl]");
    process.exit(2);
  }
  const checks = await smoke({ api, agentApi, apiKey });
  for (const c of checks)
    console.log(
      `${c.ok ? "ok  " : "FAIL"} ${c.check.padEnd(52)} ${String(c.ms).padStart(6)} ms  ${c.detail}`,
    );
  process.exit(checks.every((c) => c.ok) ? 0 : 1);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
