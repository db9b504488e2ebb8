import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "../infra/local/http-util.ts";
import { fmt } from "./load.ts";
import { startPlatform } from "./platform.ts";

// npm run bench -- agent: a trivial one-node graph served by this platform (deployed through /v2, every
// checkpoint persisted to DynamoDB Local) and by `@langchain/langgraph-cli dev` (the in-memory reference
// server) in the same run. Latency: create-thread + runs.wait, one client, p50/p95. Throughput: runs/s with
// 50 clients, each looping create-thread + runs.wait. The reference is installed on first use under
// .cache/langgraph-cli (it needs the npm registry once).
const REF_DIR = resolve(".cache/langgraph-cli");
const LATENCY_RUNS = Number(process.env.BENCH_AGENT_LATENCY_RUNS ?? 100);
const CLIENTS = 50;
const SECONDS = Number(process.env.BENCH_AGENT_SECONDS ?? 15);

const GRAPH = `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ n: Annotation() });
export const graph = new StateGraph(State)
  .addNode("step", (s) => ({ n: (s.n ?? 0) + 1 }))
  .addEdge(START, "step").addEdge("step", END).compile();
`;

function ensureReference(): string {
  const bin = join(REF_DIR, "node_modules", ".bin", "langgraphjs");
  if (!existsSync(bin)) {
    mkdirSync(REF_DIR, { recursive: true });
    if (!existsSync(join(REF_DIR, "package.json")))
      writeFileSync(
        join(REF_DIR, "package.json"),
        '{"name":"langgraph-cli-reference","private":true,"type":"module"}\n',
      );
    execFileSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "@langchain/langgraph-cli@2.0.0",
        "@langchain/langgraph@1.7.3",
        "@langchain/core@1.4.0",
      ],
      { cwd: REF_DIR, stdio: "inherit" },
    );
  }
  return bin;
}

/** The graph as a git repository (for the platform) inside the reference's folder (so it resolves its packages). */
function graphRepo(): string {
  const dir = mkdtempSync(join(REF_DIR, "graph-"));
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({ graphs: { agent: "./graph.mjs:graph" }, env: {} }),
  );
  writeFileSync(join(dir, "graph.mjs"), GRAPH);
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      stdio: "pipe",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "b",
        GIT_AUTHOR_EMAIL: "b@x",
        GIT_COMMITTER_NAME: "b",
        GIT_COMMITTER_EMAIL: "b@x",
      },
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "graph");
  return dir;
}

async function startReference(bin: string, dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    bin,
    [
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
      "--config",
      join(dir, "langgraph.json"),
    ],
    {
      cwd: dir,
      stdio: ["ignore", "ignore", "ignore"],
      detached: true,
      env: { ...process.env, LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false" },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  while (
    !(await fetch(`${url}/ok`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode != null) throw new Error(`langgraphjs dev exited with ${child.exitCode}`);
    if (performance.now() - t0 > 120_000) throw new Error("langgraphjs dev did not start within 120 s");
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, child };
}

const quantile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
};

async function measure(client: Client) {
  const once = async () => {
    const t = await client.threads.create();
    const out = (await client.runs.wait(t.thread_id, "agent", { input: { n: 1 } })) as { n?: number };
    if (out?.n !== 2) throw new Error(`unexpected result ${JSON.stringify(out)}`);
  };
  for (let i = 0; i < 5; i++) await once(); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const t0 = performance.now();
    await once();
    latencies.push(performance.now() - t0);
  }
  let runs = 0;
  let errors = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        try {
          await once();
          runs++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const rps = runs / ((performance.now() - started) / 1000);
  return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), rps, errors };
}

/** The graph deployed through /v2 on a fresh platform, then measured; the platform is stopped after. */
async function measurePlatform(dir: string, env: Record<string, string>) {
  const platform = await startPlatform({ LOG_LEVEL: "warn", ...env });
  try {
    const headers = {
      "x-api-key": platform.facts.api_key,
      "x-tenant-id": platform.facts.tenant_id,
      "content-type": "application/json",
    };
    const created = (await (
      await fetch(`${platform.base}/v2/deployments`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          name: `bench-agent-${Date.now()}`,
          source: "github",
          source_config: { repo_url: dir, deployment_type: "dev" },
          source_revision_config: { repo_ref: "main" },
        }),
      })
    ).json()) as any;
    for (;;) {
      const r = (await (
        await fetch(`${platform.base}/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`, {
          headers,
        })
      ).json()) as any;
      if (r.status === "DEPLOYED") break;
      if (/FAILED/.test(r.status)) throw new Error(`deploy ${r.status}: ${r.error}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    return await measure(
      new Client({
        apiUrl: `${platform.base}/agents/${created.id}`,
        apiKey: platform.facts.api_key,
        defaultHeaders: { "X-Tenant-Id": platform.facts.tenant_id },
      }),
    );
  } finally {
    await platform.stop();
  }
}

export async function agentBench() {
  const bin = ensureReference();
  const dir = graphRepo();
  let ref: ChildProcess | undefined;
  try {
    // DynamoDB Local keeps its tables in SQLite: on disk every item written is a synced commit, which on a
    // small VM caps writes at a few hundred items/s; in memory (-inMemory) it is the same DynamoDB API with
    // the same requests, without the disk. Both are measured; the reference keeps everything in memory.
    const onDisk = await measurePlatform(dir, {});
    const inMemory = await measurePlatform(dir, { DYNAMODB_IN_MEMORY: "1" });
    const reference = await startReference(bin, dir);
    ref = reference.child;
    const theirs = await measure(new Client({ apiUrl: reference.url }));
    console.log(
      "\nagent: one-node graph, create-thread + runs.wait (platform: every checkpoint persisted, runs traced)",
    );
    console.log("| server | p50 ms | p95 ms | runs/s (50 clients) | errors |");
    console.log("|---|---|---|---|---|");
    const row = (name: string, r: Awaited<ReturnType<typeof measure>>) =>
      console.log(`| ${name} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.rps)} | ${r.errors} |`);
    row("this platform, DynamoDB Local on disk", onDisk);
    row("this platform, DynamoDB Local in memory", inMemory);
    row("langgraphjs dev (in-memory reference)", theirs);
    for (const [name, ours] of [
      ["on disk", onDisk],
      ["in memory", inMemory],
    ] as const)
      console.log(
        `ratios (${name}): p50 ${fmt(ours.p50 / theirs.p50, 2)}× the reference (goal ≤ 0.2), throughput ${fmt(ours.rps / theirs.rps, 2)}× (goal ≥ 1)`,
      );
  } finally {
    if (ref?.pid) process.kill(-ref.pid, "SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}
