import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { startPlatform } from "../harness/platform.ts";
import { gitRepo } from "../harness/repos.ts";
import { freePort } from "../infra/local/http-util.ts";
import { loopbackRelay } from "../shared/containment/process-egress.ts";
import { fmt } from "./load.ts";

// npm run bench -- agent: a trivial one-node graph served by this platform (deployed through /v2, every
// checkpoint persisted to DynamoDB Local) and by `@langchain/langgraph-cli dev` (the in-memory reference
// server) in the same run. Latency: create-thread + runs.wait, one client, p50/p95. Throughput: runs/s with
// 50 clients, each looping create-thread + runs.wait. The reference is installed on first use under
// .cache/langgraph-cli (it needs the npm registry once).
const REF_DIR = resolve(".cache/langgraph-cli");
/**
 * Issue 36's goals, each against the reference measured in the same run: p50 and throughput as ratios to it,
 * CPU per run as a ratio to its CPU per run, the runtime's cold start, AWS's on-demand cost of a million runs.
 */
const GOALS = { p50: 0.1, throughput: 0.5, cpu: 2, coldStartMs: 1000, costPerMillion: 25 };
const LATENCY_RUNS = Number(process.env.BENCH_AGENT_LATENCY_RUNS ?? 100);
const CLIENTS = 50;
const SECONDS = Number(process.env.BENCH_AGENT_SECONDS ?? 15);
/**
 * Each client's runs before the measured window: the platform's functions (the router holds an execution
 * environment for each streamed run) scale out to the clients' concurrency first, as a warm Lambda fleet under
 * steady load has, so the window measures runs, not environments starting (about 1 s of CPU each locally).
 */
const WARMUP_RUNS = Number(process.env.BENCH_AGENT_WARMUP_RUNS ?? 2);

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
  const langgraphJson = JSON.stringify({ graphs: { agent: "./graph.mjs:graph" }, env: {} });
  return gitRepo({ "langgraph.json": langgraphJson, "graph.mjs": GRAPH }, {}, { parent: REF_DIR }).dir;
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

const once = (client: Client) => async () => {
  const t = await client.threads.create();
  const out = (await client.runs.wait(t.thread_id, "agent", { input: { n: 1 } })) as { n?: number };
  if (out?.n !== 2) throw new Error(`unexpected result ${JSON.stringify(out)}`);
};

async function latency(client: Client, runs = LATENCY_RUNS) {
  const run = once(client);
  for (let i = 0; i < 5; i++) await run(); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    latencies.push(performance.now() - t0);
  }
  return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95) };
}

/**
 * CPU seconds a process and its descendants have used, from /proc, and the kernel's (system) share of them;
 * `skip` names excluded.
 */
function cpuSeconds(root: number, skip: RegExp = /^$/): { cpu: number; systemCpu: number } {
  const children = new Map<number, number[]>();
  const stat = new Map<number, { comm: string; user: number; system: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = text.lastIndexOf(")");
      const comm = text.slice(text.indexOf("(") + 1, close);
      const fields = text.slice(close + 2).split(" ");
      const ppid = Number(fields[1]);
      stat.set(Number(entry), { comm, user: Number(fields[11]), system: Number(fields[12]) });
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  let user = 0;
  let system = 0;
  const walk = (pid: number) => {
    const s = stat.get(pid);
    if (!s || skip.test(s.comm)) return;
    user += s.user;
    system += s.system;
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return { cpu: (user + system) / 100, systemCpu: system / 100 };
}

async function measure(client: Client, sample: () => Promise<Sample> = async () => ({ cpu: 0 })) {
  const { p50, p95 } = await latency(client);
  const run = once(client);
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < WARMUP_RUNS; i++) await run().catch(() => {});
    }),
  );
  let runs = 0;
  let errors = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const before = await sample();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        try {
          await run();
          runs++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const rps = runs / ((performance.now() - started) / 1000);
  const after = await sample();
  return { p50, p95, rps, errors, runs, perRun: perRun(before, after, runs) };
}

interface Counts {
  dynamodb: {
    requests: number;
    read_units: number;
    write_units: number;
    billed_write_units: number;
    commands?: Record<string, { requests: number; units: number; billed: number }>;
    shapes?: Record<string, number>;
  };
  s3: { requests: number; puts: number; gets: number };
}
interface Sample {
  cpu: number;
  /** Of `cpu`, the kernel's share (system time: on loopback, most of it is the network stack). */
  systemCpu?: number;
  runtimeCpu?: number;
  counts?: Counts;
  /** The platform process's share of `counts` (the rest is the runtime's). */
  platformCounts?: Counts;
  runtimeCounts?: Counts;
}
const perRun = (a: Sample, b: Sample, runs: number) => ({
  cpuMs: ((b.cpu - a.cpu) * 1000) / Math.max(runs, 1),
  systemCpuMs: (((b.systemCpu ?? 0) - (a.systemCpu ?? 0)) * 1000) / Math.max(runs, 1),
  runtimeCpuMs: (((b.runtimeCpu ?? 0) - (a.runtimeCpu ?? 0)) * 1000) / Math.max(runs, 1),
  platformWru: b.platformCounts
    ? (b.platformCounts.dynamodb.billed_write_units - a.platformCounts!.dynamodb.billed_write_units) / runs
    : 0,
  platformRequests: b.platformCounts
    ? (b.platformCounts.dynamodb.requests - a.platformCounts!.dynamodb.requests) / runs
    : 0,
  dynamodb: b.counts && {
    requests: (b.counts.dynamodb.requests - a.counts!.dynamodb.requests) / runs,
    rru: (b.counts.dynamodb.read_units - a.counts!.dynamodb.read_units) / runs,
    wru: (b.counts.dynamodb.billed_write_units - a.counts!.dynamodb.billed_write_units) / runs,
    localWru: (b.counts.dynamodb.write_units - a.counts!.dynamodb.write_units) / runs,
  },
  s3: b.counts && {
    puts: (b.counts.s3.puts - a.counts!.s3.puts) / runs,
    gets: (b.counts.s3.gets - a.counts!.s3.gets) / runs,
  },
});

const add = (a: Counts, b: Counts): Counts => ({
  dynamodb: {
    requests: a.dynamodb.requests + b.dynamodb.requests,
    read_units: a.dynamodb.read_units + b.dynamodb.read_units,
    write_units: a.dynamodb.write_units + b.dynamodb.write_units,
    billed_write_units: a.dynamodb.billed_write_units + b.dynamodb.billed_write_units,
  },
  s3: { requests: a.s3.requests + b.s3.requests, puts: a.s3.puts + b.s3.puts, gets: a.s3.gets + b.s3.gets },
});

/** The graph deployed through /v2 on a fresh platform, then measured; the platform is stopped after. */
async function measurePlatform(dir: string, env: Record<string, string>) {
  const platform = await startPlatform({
    LOG_LEVEL: "warn",
    PLATFORM_COUNT_REQUESTS: process.env.BENCH_AGENT_VERBOSE ? "shapes" : "1",
    ...env,
  });
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
    const client = new Client({
      apiUrl: `${platform.base}/agents/${created.id}`,
      apiKey: platform.facts.api_key,
      defaultHeaders: { "X-Tenant-Id": platform.facts.tenant_id },
    });
    await once(client)();
    const runtime = JSON.parse(
      readFileSync(join(platform.dataDir, "runtime", `${created.id}.json`), "utf8"),
    ) as { socket: string; token: string; tenant_id: string; pid: number; cold_start_ms: number };
    // The runtime listens on a Unix socket in its sandbox's folder: a loopback relay to it (a few µs) lets
    // the SDK's fetch reach it straight.
    const runtimePort = await loopbackRelay(runtime.socket);
    // The extra hop: the same calls straight to the runtime (what the gateway adds: API key check, forward),
    // alternating with calls through the gateway so both see the same state of the store.
    const straight = once(
      new Client({
        apiUrl: `http://127.0.0.1:${runtimePort}/agents/${created.id}`,
        defaultHeaders: { "x-runtime-token": runtime.token, "x-router-tenant": runtime.tenant_id },
      }),
    );
    const viaGateway = once(client);
    const hop = { gateway: [] as number[], direct: [] as number[] };
    for (let i = 0; i < LATENCY_RUNS + 5; i++)
      for (const [list, run] of [
        [hop.gateway, viaGateway],
        [hop.direct, straight],
      ] as const) {
        const t0 = performance.now();
        await run();
        if (i >= 5) list.push(performance.now() - t0);
      }
    const direct = { p50: quantile(hop.direct, 0.5), viaGateway: quantile(hop.gateway, 0.5) };
    const stats = async (url: string, init: RequestInit) =>
      ((await (await fetch(url, init)).json()) as { requests: Counts }).requests;
    const sample = async (): Promise<Sample> => {
      const gateway = await stats(`${platform.base}/__platform/stats`, { method: "POST" });
      const rt = await stats(`http://127.0.0.1:${runtimePort}/__runtime/stats`, {
        headers: { "x-runtime-token": runtime.token },
      });
      return {
        // The platform process and its runtimes; DynamoDB Local's JVM (a child too) is excluded.
        ...cpuSeconds(platform.facts.pid, /^java$/),
        runtimeCpu: cpuSeconds(runtime.pid).cpu,
        counts: add(gateway, rt),
        platformCounts: gateway,
        runtimeCounts: rt,
      };
    };
    const measured = await measure(client, sample);
    if (process.env.BENCH_AGENT_VERBOSE) {
      // What the writes are made of, per run (every run this platform served: 3 × LATENCY_RUNS + 16 + the
      // measured ones): the runtime's, then the platform's (trace ingestion, gateway).
      const { runtimeCounts, platformCounts } = await sample();
      for (const [who, counts] of [
        ["runtime", runtimeCounts],
        ["platform", platformCounts],
      ] as const) {
        console.log(`${who}: ${JSON.stringify(counts?.dynamodb.commands)}`);
        const shapes = Object.entries(counts?.dynamodb.shapes ?? {}).sort((a, b) => b[1] - a[1]);
        for (const [shape, n] of shapes.filter(([, n]) => n >= measured.runs / 10))
          console.log(`  ${fmt(n / (measured.runs + 3 * LATENCY_RUNS + 16), 2)} per run: ${shape}`);
      }
    }
    return { ...measured, direct, coldStartMs: runtime.cold_start_ms };
  } finally {
    await platform.stop();
  }
}

// Published on-demand prices (us-east-1, arm64 Lambda, REST API), per unit.
const PRICE = {
  wru: 0.625e-6,
  rru: 0.125e-6,
  lambdaRequest: 0.2e-6,
  lambdaGbSecond: 0.0000133334,
  restRequest: 3.5e-6,
  s3Put: 5e-6,
  s3Get: 0.4e-6,
};
const HOSTED_PER_RUN = 0.005;

/**
 * What 1M such runs would cost in AWS, from what this run counted per run: DynamoDB units (ReturnConsumedCapacity
 * on every call of the platform and the runtime), S3 requests, and the AWS shape of a run: 2 REST API requests
 * (threads.create, runs.wait), each through the router (512 MB) into the runtime (1024 MB), plus the runtime's
 * async drain invocation that executes the run and the AgentTraceIngest call it flushes before returning;
 * durations taken from the measured single-client latency.
 */
function awsCost(r: Awaited<ReturnType<typeof measurePlatform>>) {
  const d = r.perRun.dynamodb!;
  const s3 = r.perRun.s3!;
  const seconds = r.p50 / 1000;
  const gbSeconds = 0.5 * seconds + 1 * seconds + 1 * seconds + 0.5 * 0.03;
  const parts = {
    "API Gateway (2 REST requests)": 2 * PRICE.restRequest,
    "Lambda requests (2 router + 2 runtime + 1 drain + 1 trace)": 6 * PRICE.lambdaRequest,
    [`Lambda duration (${fmt(gbSeconds, 3)} GB-s)`]: gbSeconds * PRICE.lambdaGbSecond,
    [`DynamoDB (${fmt(d.wru, 1)} WRU by DynamoDB's rules — DynamoDB Local reported ${fmt(d.localWru, 1)} — + ${fmt(d.rru, 1)} RRU, ${fmt(d.requests, 1)} requests; of which trace ingestion and the gateway ${fmt(r.perRun.platformWru, 1)} WRU, ${fmt(r.perRun.platformRequests, 1)} requests)`]:
      d.wru * PRICE.wru + d.rru * PRICE.rru,
    [`S3 (${fmt(s3.puts, 2)} PUT + ${fmt(s3.gets, 2)} GET)`]: s3.puts * PRICE.s3Put + s3.gets * PRICE.s3Get,
  };
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  console.log("\nAWS cost of 1M such runs (on-demand prices; counts from the in-memory run):");
  for (const [k, v] of Object.entries(parts)) console.log(`  ${k}: $${fmt(v * 1e6, 2)}`);
  console.log(
    `  total $${fmt(total * 1e6, 2)} per 1M runs (goal ≤ $${GOALS.costPerMillion}) vs the hosted platform's $${fmt(HOSTED_PER_RUN * 1e6, 0)} (+ uptime): ${fmt(total / HOSTED_PER_RUN, 4)}×`,
  );
}

export async function agentBench() {
  const bin = ensureReference();
  const dir = graphRepo();
  let ref: ChildProcess | undefined;
  try {
    // DynamoDB Local keeps its tables in SQLite: on disk every item written is a synced commit, which on a
    // small VM caps writes at a few hundred items/s; in memory (-inMemory) it is the same DynamoDB API with
    // the same requests, without the disk. Both are measured; the reference keeps everything in memory.
    const modes = (process.env.BENCH_AGENT_MODES ?? "disk,memory").split(",");
    const onDisk = modes.includes("disk") ? await measurePlatform(dir, {}) : undefined;
    const inMemory = await measurePlatform(dir, { DYNAMODB_IN_MEMORY: "1" });
    const reference = await startReference(bin, dir);
    ref = reference.child;
    const theirs = await measure(new Client({ apiUrl: reference.url }), async () => ({
      ...cpuSeconds(reference.child.pid!),
    }));
    console.log(
      "\nagent: one-node graph, create-thread + runs.wait (platform: every checkpoint persisted, runs traced)",
    );
    console.log("| server | p50 ms | p95 ms | runs/s (50 clients) | errors |");
    console.log("|---|---|---|---|---|");
    const row = (name: string, r: Awaited<ReturnType<typeof measure>>) =>
      console.log(`| ${name} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.rps)} | ${r.errors} |`);
    if (onDisk) row("this platform, DynamoDB Local on disk", onDisk);
    row("this platform, DynamoDB Local in memory", inMemory);
    row("langgraphjs dev (in-memory reference)", theirs);
    for (const [name, ours] of [
      ["on disk", onDisk],
      ["in memory", inMemory],
    ] as const) {
      if (!ours) continue;
      console.log(
        `ratios (${name}): p50 ${fmt(ours.p50 / theirs.p50, 2)}× the reference (goal ≤ ${GOALS.p50}), throughput ${fmt(ours.rps / theirs.rps, 2)}× (goal ≥ ${GOALS.throughput})`,
      );
      console.log(
        `  the gateway's hop (${name}, alternating): p50 ${fmt(ours.direct.viaGateway)} ms through it, ${fmt(ours.direct.p50)} ms straight to the runtime (+${fmt(ours.direct.viaGateway - ours.direct.p50, 2)} ms); runtime cold start ${fmt(ours.coldStartMs)} ms (goal ≤ ${fmt(GOALS.coldStartMs)} ms)`,
      );
      console.log(
        `  CPU per run (${name}, 50 clients): platform + runtime ${fmt(ours.perRun.cpuMs, 1)} ms (runtime ${fmt(ours.perRun.runtimeCpuMs, 1)}; kernel ${fmt(ours.perRun.systemCpuMs, 1)}), reference ${fmt(theirs.perRun.cpuMs, 1)} ms (kernel ${fmt(theirs.perRun.systemCpuMs, 1)}) → ${fmt(ours.perRun.cpuMs / theirs.perRun.cpuMs, 2)}× (goal ≤ ${GOALS.cpu})`,
      );
    }
    awsCost(inMemory);
  } finally {
    if (ref?.pid) process.kill(-ref.pid, "SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}
