import { readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { gitRepo, grantTestFolders } from "../harness/repos.ts";
import { sweepExpiredThreads } from "../shared/agent/cleanup/thread-ttl.ts";
import { dueCrons } from "../shared/agent/crons/crons.ts";
import type { OpsContext } from "../shared/agent/ops/caller.ts";
import { sweep as sweepCrons } from "../shared/agent/ops/crons.ts";
import { sweepRuns } from "../shared/agent/runs/sweeper.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { windowAt } from "../shared/auth/window-counter.ts";
import { deleteItem, getItem, putItem } from "../shared/aws/ddb.ts";
import { HttpError } from "../shared/errors.ts";
import { ACTIVE_RUNS, agentKeys, CRONS_DUE, THREAD_TTL } from "../shared/records/agent.ts";
import { tenants } from "../shared/records/identity.ts";
import { shardKey } from "../shared/records/shard.ts";
import { base, call } from "./helpers/cloud.ts";

// Issue 33, Deliver 5: capacity one tenant cannot take from another. A hostile deployment (or anyone calling a
// custom-auth deployment without a key) tries to use up what the platform shares: the owner's rate limit, the
// platform process's memory through the runtime's socket, the account's Lambda functions and roles through
// deployments, and the sweeper's shared index of active runs.

// The owner's workspace limits itself (its record's own limit: 10 requests per 20 s window), so a flood of keyless
// requests a loaded machine can send in a few seconds would use it up if it counted there.
const OWNER_BURST = 10;
const OWNER_WINDOW_MS = 20_000;

const AUTH = `
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth().authenticate(async (request) => {
  if (request.headers.get("authorization") !== "Bearer user-token") throw new HTTPException(401, { message: "Invalid token" });
  return { identity: "user", permissions: [] };
});
`;

// Sends trace messages to the platform socket the way a hostile graph can: a raw HTTP request through the loopback
// relay its HTTPS_PROXY names, which passes bytes straight to the platform socket.
const GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import * as net from "node:net";
const MB = Buffer.alloc(1 << 20, 97);
const PREFIX = Buffer.from('{"posts":[],"pad":"');
const SUFFIX = Buffer.from('"}');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function message({ mb, chunked = false, pauseHalfway, started }) {
  const relay = new URL(process.env.HTTPS_PROXY);
  return new Promise((resolve) => {
    const s = net.connect({ host: relay.hostname, port: Number(relay.port) });
    let answer = "";
    let settled = false;
    let sentMb = 0;
    // Says once that this request has gone as far as it goes before the gate (or ended).
    const mark = () => { started?.(); started = undefined; };
    const done = (r) => { if (!settled) { settled = true; resolve({ ...r, sentMb }); } s.destroy(); mark(); };
    s.on("data", (c) => {
      answer += c.toString("latin1");
      const m = /^HTTP\\/1\\.1 (\\d{3})/.exec(answer);
      if (m) done({ status: Number(m[1]), retryAfter: /retry-after: (\\d+)/i.exec(answer)?.[1] ?? null });
    });
    s.on("error", (e) => done({ error: e.code ?? String(e) }));
    s.on("close", () => done({ error: "closed" }));
    const put = (b) => new Promise((r) => (s.write(b) ? r() : s.once("drain", r)));
    const frame = (b) => (chunked ? Buffer.concat([Buffer.from(b.length.toString(16) + "\\r\\n"), b, Buffer.from("\\r\\n")]) : b);
    s.on("connect", async () => {
      const length = PREFIX.length + mb * MB.length + SUFFIX.length;
      const head = chunked ? "transfer-encoding: chunked" : "content-length: " + length;
      try {
        await put("POST /__platform/runtime-traces HTTP/1.1\\r\\nhost: platform\\r\\ncontent-type: application/json\\r\\n" + head + "\\r\\n\\r\\n");
        await put(frame(PREFIX));
        for (let i = 0; i < mb && !settled; i++) {
          if (pauseHalfway && i === Math.floor(mb / 2)) {
            mark();
            await pauseHalfway;
          }
          await put(frame(MB));
          sentMb++;
        }
        if (!settled) await put(frame(SUFFIX));
        if (chunked && !settled) await put("0\\r\\n\\r\\n");
      } catch {}
      mark();
    });
  });
}
// An AWS call the platform socket passes to the policy proxy, which holds its whole body before checking its
// signature: a Lambda invoke (the AWS emulator's) or a DynamoDB call without X-Amz-Target, 6 MiB declared, held
// open halfway. (Before, each counted as a streamed S3 body in the runtime's budget: 64 KiB.)
function awsMessage({ service, pauseHalfway, started }) {
  const relay = new URL(process.env.HTTPS_PROXY);
  const date = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15) + "Z";
  const auth = "AWS4-HMAC-SHA256 Credential=AKIAFORGED/" + date.slice(0, 8) + "/${process.env.AWS_REGION}/" + service +
    "/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0".repeat(64);
  const path = service === "lambda" ? "/2015-03-31/functions/agent-platform-AgentTraceIngest/invocations" : "/";
  return new Promise((resolve) => {
    const s = net.connect({ host: relay.hostname, port: Number(relay.port) });
    let answer = "";
    let settled = false;
    const mark = () => { started?.(); started = undefined; };
    const done = (r) => { if (!settled) { settled = true; resolve(r); } s.destroy(); mark(); };
    s.on("data", (c) => {
      answer += c.toString("latin1");
      const m = /^HTTP\\/1\\.1 (\\d{3})/.exec(answer);
      if (m) done({ status: Number(m[1]) });
    });
    s.on("error", (e) => done({ error: e.code ?? String(e) }));
    s.on("close", () => done({ error: "closed" }));
    const put = (b) => new Promise((r) => (s.write(b) ? r() : s.once("drain", r)));
    s.on("connect", async () => {
      try {
        await put("POST " + path + " HTTP/1.1\\r\\nhost: platform\\r\\nauthorization: " + auth + "\\r\\nx-amz-date: " + date +
          "\\r\\ncontent-length: " + 6 * MB.length + "\\r\\n\\r\\n");
        mark();
        for (let i = 0; i < 6 && !settled; i++) {
          if (i === 3) await pauseHalfway;
          await put(MB);
        }
      } catch {}
    });
  });
}
async function attack() {
  // Parallel bodies far over any trace call, declared.
  const declared = await Promise.all(Array.from({ length: 5 }, () => message({ mb: 40 })));
  // The same, chunked: no length to refuse them by before they are read.
  const chunked = await Promise.all(Array.from({ length: 5 }, () => message({ mb: 40, chunked: true })));
  // Many bodies within the cap at once, each held open halfway until all have started.
  // The gate opens a second after every request has sent its head (a loaded machine connects slowly).
  let go;
  const gate = new Promise((r) => (go = r));
  let heads = 0;
  const started = () => { if (++heads === 120) sleep(1000).then(go); };
  const parallel = Array.from({ length: 120 }, () => message({ mb: 1, pauseHalfway: gate, started }));
  const parallelDone = await Promise.all(parallel);
  let goAws;
  const awsGate = new Promise((r) => (goAws = r));
  let awsHeads = 0;
  const awsStarted = () => { if (++awsHeads === 120) sleep(1000).then(goAws); };
  const aws = await Promise.all(Array.from({ length: 120 }, (_, i) =>
    awsMessage({ service: i % 2 ? "lambda" : "dynamodb", pauseHalfway: awsGate, started: awsStarted })));
  return { declared, chunked, parallel: parallelDone, aws };
}
const State = Annotation.Root({ report: Annotation() });
export const graph = new StateGraph(State)
  .addNode("attack", async () => ({ report: await attack() }))
  .addEdge(START, "attack").compile();
`;

const repo = gitRepo({
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    auth: { path: "./src/auth.mjs:auth" },
  }),
  "src/graph.mjs": GRAPH,
  "src/auth.mjs": AUTH,
});

let owner: Record<string, string>;
let deploymentId: string;

beforeAll(async () => {
  const tenant = newTenantId();
  const key = newApiKey();
  await tenants.put({
    id: tenant,
    name: "capacity owner",
    created_at: new Date().toISOString(),
    rate_limit: OWNER_BURST / (OWNER_WINDOW_MS / 1000),
    rate_burst: OWNER_BURST,
  });
  await storeApiKey(key, [tenant]);
  await grantTestFolders(tenant);
  owner = { "X-Api-Key": key, "X-Tenant-Id": tenant };
  deploymentId = await deploySlowly();
}, 400_000);

/** Deploys the repository, polling once a second: within the owner's own low limit. */
async function deploySlowly(): Promise<string> {
  const created = await call("POST", "/v2/deployments", {
    headers: owner,
    body: {
      name: `capacity-${crypto.randomUUID().slice(0, 8)}`,
      source: "github",
      source_config: { repo_url: repo.dir, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    },
  });
  expect(created.status).toBe(201);
  const { id, latest_revision_id } = created.json;
  for (const until = Date.now() + 360_000; Date.now() < until; ) {
    await sleep(3000);
    const r = await call("GET", `/v2/deployments/${id}/revisions/${latest_revision_id}`, { headers: owner });
    if (r.json?.status === "DEPLOYED") return id;
    if (/FAILED/.test(r.json?.status ?? "")) throw new Error(`revision ${r.json.status}: ${r.json.error}`);
  }
  throw new Error("the revision did not deploy within 360 s");
}

afterAll(() => repo.remove());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("keyless traffic to a custom-auth deployment", () => {
  it("counts in the deployment's end users' buckets, never the owner's: a flood leaves the owner's /v2 calls at 200", async () => {
    // All of it in a fresh window of the owner's (aligned to the clock the platform shares).
    const { start } = windowAt(Date.now(), OWNER_WINDOW_MS);
    await sleep(start + OWNER_WINDOW_MS - Date.now() + 50);
    const statuses: number[] = [];
    const one = async () => {
      const r = await fetch(`${base}/agents/${deploymentId}/threads/search`, { method: "POST", body: "{}" });
      await r.arrayBuffer();
      statuses.push(r.status);
    };
    // Twice the owner's window's worth, or as many as the machine sends in 10 s.
    for (const until = Date.now() + 10_000; statuses.length < 2 * OWNER_BURST && Date.now() < until; )
      await Promise.all(Array.from({ length: 10 }, one));
    console.log(`${statuses.length} keyless requests in the owner's window`);
    expect(statuses.length).toBeGreaterThan(OWNER_BURST);
    // Refused by the deployment's own authenticate (or, past their own buckets, 429).
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // The owner's calls in the same window.
    for (let i = 0; i < 3; i++)
      expect((await call("GET", "/v2/deployments", { headers: owner })).status).toBe(200);
  });
});

/** The resident memory of the process serving the runtimes' sockets (the local cloud: vitest's main process). */
function platformRssMb(): number {
  const status = readFileSync(`/proc/${process.ppid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

describe("a runtime's platform socket", () => {
  let report: any;
  const rss = { before: 0, peak: 0 };

  beforeAll(async () => {
    expect(readFileSync(`/proc/${process.ppid}/cmdline`, "utf8")).toMatch(/vitest/);
    const operator = new Client({ apiUrl: `${base}/agents/${deploymentId}`, apiKey: owner["X-Api-Key"] });
    const t = await operator.threads.create();
    rss.before = platformRssMb();
    rss.peak = rss.before;
    const sampler = setInterval(() => {
      rss.peak = Math.max(rss.peak, platformRssMb());
    }, 20);
    try {
      report = ((await operator.runs.wait(t.thread_id, "agent", { input: {} })) as { report: unknown })
        .report;
    } finally {
      clearInterval(sampler);
    }
    const count = (rs: any[]) => JSON.stringify(rs.map((r) => `${r.status ?? r.error} after ${r.sentMb} MB`));
    console.log(`declared ${count(report.declared)}, chunked ${count(report.chunked)}`);
    console.log(`parallel ${count(report.parallel)}`);
    console.log(
      `platform RSS ${rss.before.toFixed(0)} MB before, ${rss.peak.toFixed(0)} MB at most during the attack`,
    );
  }, 180_000);

  it("refuses a trace body larger than its cap before reading it (413), however many come at once", () => {
    // Answered 413 and cut off: the rest of the body is never taken. (The graph's loopback relay often resets its
    // side before passing the answer on; a runtime's own trace sender talks to the socket itself and reads it.)
    for (const r of report.declared) {
      expect(r.status === 413 || r.error === "ECONNRESET" || r.error === "EPIPE", JSON.stringify(r)).toBe(
        true,
      );
      expect(r.sentMb).toBeLessThan(40);
    }
  });

  it("refuses a chunked trace body once it passes the cap (413)", () => {
    expect(report.chunked.map((r: any) => r.status)).toEqual([413, 413, 413, 413, 413]);
  });

  it("holds a runtime's parallel bodies within its budget: beyond its queue they are refused with 503 and Retry-After", () => {
    const statuses = report.parallel.map((r: any) => r.status ?? r.error);
    const refused = report.parallel.filter((r: any) => r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.retryAfter).toBe("1");
    expect(statuses.filter((s: unknown) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s: unknown) => s === 200 || s === 503)).toBe(true);
  });

  it("counts an AWS call by what the policy proxy holds of it (a Lambda invoke, a DynamoDB call without its target): beyond the budget, 503", () => {
    const statuses = report.aws.map((r: any) => r.status ?? r.error);
    expect(statuses.filter((s: unknown) => s === 503).length).toBeGreaterThan(0);
    // The rest were read whole and refused as forged (400, 403), never let through. (A refused request's
    // connection is closed with its 503, which the graph's loopback relay often passes on as a reset.)
    expect(
      statuses.every(
        (s: unknown) => s === 400 || s === 403 || s === 503 || s === "ECONNRESET" || s === "EPIPE",
      ),
      JSON.stringify(statuses),
    ).toBe(true);
  });

  it("the platform process's memory stays bounded through all of it", () => {
    expect(rss.peak - rss.before).toBeLessThan(250);
  });
});

describe("deployments per workspace", () => {
  const MAX = 3;
  let headers: Record<string, string>;
  const bare = gitRepo({ "README.md": "no graph here: the build fails at once" });
  afterAll(() => bare.remove());
  const create = (name: string) =>
    call("POST", "/v2/deployments", {
      headers,
      body: {
        name,
        source: "github",
        source_config: { repo_url: bare.dir, deployment_type: "dev", build_on_push: false },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      },
    });

  beforeAll(async () => {
    const tenant = newTenantId();
    const key = newApiKey();
    await ensureTenant(tenant, "capped");
    await tenants.put({ ...(await tenants.get(tenant, true))!, max_deployments: MAX });
    await storeApiKey(key, [tenant]);
    await grantTestFolders(tenant);
    headers = { "X-Api-Key": key, "X-Tenant-Id": tenant };
  });

  it("concurrent creates never pass the cap; the one beyond it is a 409 naming it; a delete makes room", async () => {
    const tag = crypto.randomUUID().slice(0, 6);
    const answers = await Promise.all(Array.from({ length: 2 * MAX }, (_, i) => create(`cap-${tag}-${i}`)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(MAX).fill(201), ...Array(MAX).fill(409)]);
    for (const r of answers.filter((a) => a.status === 409))
      expect(r.json.detail).toMatch(new RegExp(`has ${MAX} deployments, the most it may have`));
    const listed = await call("GET", "/v2/deployments?limit=100", { headers });
    expect(listed.json.resources).toHaveLength(MAX);

    expect((await create(`cap-${tag}-more`)).status).toBe(409);
    const gone = answers.find((a) => a.status === 201)!.json.id;
    expect((await call("DELETE", `/v2/deployments/${gone}`, { headers })).status).toBe(204);
    expect((await create(`cap-${tag}-after-delete`)).status).toBe(201);
    expect((await create(`cap-${tag}-again`)).status).toBe(409);
  });
});

describe("the sweeper's shared index of active runs", () => {
  const BOUND = 10;
  const before = process.env.AGENT_MAX_ACTIVE_RUNS;
  afterAll(() => {
    if (before === undefined) delete process.env.AGENT_MAX_ACTIVE_RUNS;
    else process.env.AGENT_MAX_ACTIVE_RUNS = before;
  });

  // Items a runtime's role lets it write in its own partition (written here with the platform's client).
  async function entries(scope: string, n: number) {
    const keys = [];
    for (let i = 0; i < n; i++) {
      const thread = crypto.randomUUID();
      const run = crypto.randomUUID();
      const key = { PK: agentKeys.runsPk(scope, thread), SK: run };
      await putItem("main", {
        ...key,
        thread_id: thread,
        run_id: run,
        status: "pending",
        AGENT1PK: shardKey(ACTIVE_RUNS, run),
        AGENT1SK: `${scope}#${thread}#${run}`,
      });
      keys.push(key);
    }
    return keys;
  }
  const indexed = async (keys: { PK: string; SK: string }[]) =>
    (await Promise.all(keys.map((k) => getItem("main", k, true)))).filter((i) => i?.AGENT1PK).length;

  it("holds one deployment's entries to the bound after a sweep; another deployment's stay", async () => {
    const flood = await entries(`${newTenantId()}#${crypto.randomUUID()}`, 3 * BOUND);
    const other = await entries(`${newTenantId()}#${crypto.randomUUID()}`, BOUND);
    process.env.AGENT_MAX_ACTIVE_RUNS = String(BOUND);
    // The test's own entries name no deployment, so nothing is kicked; others' due threads are left to their cloud.
    await sweepRuns({ kick: async () => {} });
    expect(await indexed(flood)).toBe(BOUND);
    expect(await indexed(other)).toBe(BOUND);
  });
});

// secreview3, live: a deployed graph took its runtime's keys from its own process (it patched node:crypto's
// createHmac, which the SDK's signer calls with the secret key) and wrote 21,550 crons into its own partition, due
// in 2000, with BatchWriteItem. Every cron tick then read them first and fetched each: another workspace's
// every-minute cron fired 40 s late, then skipped ticks (a sweep took over a minute). The thread-TTL sweep reads
// its index the same way. Both now hold each deployment to AGENT_MAX_SWEPT_ENTRIES entries per sweep, as the
// run sweeper does for active runs; without the bound (the code before) these tests fail.
/** A deployment's scope (`<tenant>#<deployment>`) of a workspace of its own. */
const scope = () => `${newTenantId()}#${crypto.randomUUID()}`;
const PAST = "2000-01-01T00:00:00.000Z";

/** `n` threads of `at` whose TTL ran out long ago, as a runtime's role lets it write them in its own partition. */
async function threads(at: string, n: number) {
  const keys = [];
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    const key = { PK: agentKeys.threadsPk(at), SK: id };
    await putItem("main", { ...key, thread_id: id, AGENT1PK: shardKey(THREAD_TTL, id), AGENT1SK: PAST });
    keys.push(key);
  }
  return keys;
}

describe("the shared indexes of due crons and expired threads", () => {
  // Above any other test file's due crons or expired threads of one deployment at a time.
  const BOUND = 50;
  const before = process.env.AGENT_MAX_SWEPT_ENTRIES;
  afterAll(() => {
    if (before === undefined) delete process.env.AGENT_MAX_SWEPT_ENTRIES;
    else process.env.AGENT_MAX_SWEPT_ENTRIES = before;
  });

  // Items a runtime's role lets it write in its own partition, as the graph wrote them (here with the platform's
  // client): crons due long ago (and threads whose TTL ran out long ago: `threads` above).
  async function crons(at: string, n: number) {
    const keys = [];
    for (let i = 0; i < n; i++) {
      const id = crypto.randomUUID();
      const key = { PK: agentKeys.cronsPk(at), SK: id };
      await putItem("main", {
        ...key,
        cron_id: id,
        AGENT1PK: shardKey(CRONS_DUE, id),
        AGENT1SK: `${PAST}#${at}#${id}`,
      });
      keys.push(key);
    }
    return keys;
  }
  const indexed = async (keys: { PK: string; SK: string }[]) =>
    (await Promise.all(keys.map((k) => getItem("main", k, true)))).filter((i) => i?.AGENT1PK).length;

  it("a cron tick acts on one deployment's due crons up to the bound, and the rest leave the index; another deployment's stay", async () => {
    const [flood, other] = [scope(), scope()];
    const floodKeys = await crons(flood, 3 * BOUND);
    const otherKeys = await crons(other, BOUND);
    process.env.AGENT_MAX_SWEPT_ENTRIES = String(BOUND);
    const due = await dueCrons(Date.now());
    const of = (at: string) => due.filter((d) => `${d.tenant}#${d.deployment}` === at).length;
    expect(of(flood)).toBe(BOUND);
    expect(of(other)).toBe(BOUND);
    expect(await indexed(floodKeys)).toBe(BOUND);
    expect(await indexed(otherKeys)).toBe(BOUND);
  });

  it("the TTL sweep holds one deployment's expired threads to the bound; another deployment's stay", async () => {
    const [flood, other] = [scope(), scope()];
    const floodKeys = await threads(flood, 3 * BOUND);
    const otherKeys = await threads(other, BOUND);
    process.env.AGENT_MAX_SWEPT_ENTRIES = String(BOUND);
    // Their deployments do not exist: nothing is deleted, the entries are only read (and, beyond the bound, dropped).
    await sweepExpiredThreads(Date.now());
    expect(await indexed(floodKeys)).toBe(BOUND);
    expect(await indexed(otherKeys)).toBe(BOUND);
  });
});

// secreview4, read in the code: the run sweeper's task deletes expired threads after it re-drives runs, and locally
// arms its next sweep when this one ends; a workspace's thousands of expired threads (AGENT_MAX_SWEPT_ENTRIES in each
// of its deployments, each a delete of runs, events and checkpoints) held back every workspace's delayed runs and
// dead workers' runs for as long as their deletes took. Now a TTL sweep deletes for a bounded time and says the rest
// are due at once, so the next sweep (runs first) comes right after. (On the code before: no budget, no `deferred`.)
describe("a thread-TTL sweep behind one workspace's many expired threads", () => {
  it("stops at its time budget, counts the rest as deferred and asks for the next sweep at once", async () => {
    const keys = await threads(scope(), 20);
    onTestFinished(async () => {
      for (const key of keys) await deleteItem("main", key);
    });
    const before = Date.now();
    const swept = await sweepExpiredThreads(Date.now(), 0);
    expect(swept.deleted).toBe(0);
    expect(swept.deferred).toBeGreaterThanOrEqual(20);
    expect(swept.nextCheck).toBeLessThanOrEqual(Date.now());
    expect(swept.nextCheck).toBeGreaterThanOrEqual(before);
  });
});

// secreview4, live: one deployment's 300 every-minute crons, made through the API (no stolen key needed, within
// AGENT_MAX_SWEPT_ENTRIES), had every other workspace's cron fire minutes late and skip ticks: the cron tick fired
// due crons one after another in due order (each tick a run created and a runtime kicked, ~200 ms on a loaded
// two-core machine), and the sweep of one minute ran past the next. A workspace may have AGENT_MAX_SWEPT_ENTRIES due
// crons in each of its WORKSPACE_MAX_DEPLOYMENTS deployments. Now workspaces take turns in a sweep, and a sweep starts
// ticks for a bounded time (the rest fire at the next): a workspace's volume delays its own ticks. Here the ticks'
// work is a deployment lookup that takes a few milliseconds and fails (the flood's deployments do not exist), which
// leaves every cron as it was; the order the sweep looks deployments up in is the order it would fire them.
// (On the code before: the victim's cron comes after all 300, and the sweep has no budget.)
describe("a cron sweep behind one workspace's many due crons", () => {
  it("reaches another workspace's due cron in the first turn, and stops starting ticks at its time budget", async () => {
    const flood = newTenantId();
    const written: { PK: string; SK: string }[] = [];
    const cron = async (at: string, due: string) => {
      const id = crypto.randomUUID();
      const key = { PK: agentKeys.cronsPk(at), SK: id };
      await putItem("main", {
        ...key,
        cron_id: id,
        enabled: true,
        next_run_date: due,
        AGENT1PK: shardKey(CRONS_DUE, id),
        AGENT1SK: `${due}#${at}#${id}`,
      });
      written.push(key);
    };
    for (let d = 0; d < 3; d++) {
      const at = `${flood}#${crypto.randomUUID()}`;
      for (let i = 0; i < 100; i++) await cron(at, "2000-01-01T00:00:00.000Z");
    }
    const victimScope = `${newTenantId()}#${crypto.randomUUID()}`;
    await cron(victimScope, new Date(Date.now() - 1000).toISOString());
    onTestFinished(async () => {
      for (const key of written) await deleteItem("main", key);
    });
    const looked: string[] = [];
    const ctx = {
      clock: () => Date.now(),
      kick: async () => {},
      deployment: async (caller: { tenant: string }, id: string) => {
        looked.push(`${caller.tenant}#${id}`);
        await new Promise((r) => setTimeout(r, 2));
        throw new HttpError(503, "busy");
      },
    } as unknown as OpsContext;
    const groups = new Set((await dueCrons(Date.now())).map((d) => d.tenant)).size;
    const full = await sweepCrons(ctx, undefined, 60_000);
    expect(looked).toContain(victimScope);
    expect(looked.indexOf(victimScope)).toBeLessThan(groups);
    expect(looked.filter((l) => l.startsWith(`${flood}#`)).length).toBe(300);
    expect(full.deferred).toBe(0);
    looked.length = 0;
    // A sweep with a fifth of a second for ticks leaves most for the next.
    const short = await sweepCrons(ctx, undefined, 200);
    expect(short.deferred).toBeGreaterThan(0);
    expect(looked.length).toBeLessThan(300);
  });
});
