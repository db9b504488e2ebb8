import { readdirSync, readFileSync } from "node:fs";
import type { Client } from "@langchain/langgraph-sdk";
import { Client as LangSmith } from "langsmith";
import { agentClient, collect, deployedClient } from "../../harness/agents.ts";
import { processCustomerS3 } from "../../harness/customer-s3.ts";
import { platformApi, s3Proxy, waitFor } from "../../harness/export.ts";
import { startPlatform } from "../../harness/platform.ts";
import { gitRepo, graphRepoFiles } from "../../harness/repos.ts";
import { runAt } from "../ingest.ts";
import {
  checkExportedRows,
  EXPORT_ENV,
  exportEnd,
  exportSourceOf,
  newDestination,
  sleepyGraphFiles,
  startExport,
} from "./exports.ts";
import { check, type Knobs, type Row, seededRandom, sleep, trials, wanted } from "./summary.ts";

// Item 3: kill -9 at seeded random moments — of the platform (alone, or its whole process group: DynamoDB Local,
// builds and runtimes with it) during an export, a batch ingestion, a revision build and agent runs, and of a
// deployment's runtime alone — then the platform again on the same data: everything reaches a final state with
// nothing lost or duplicated.
const RESTART_WAIT_MS = 180_000;

type Api = ReturnType<typeof platformApi>;

/** Exports of 2 days × 100 runs in 25-run files through a slowed destination; killed within the first 3 s. */
async function exportScenario(k: Knobs, rand: () => number): Promise<Row> {
  let p = await startPlatform(EXPORT_ENV);
  const proxy = await s3Proxy((await processCustomerS3()).s3.endpoint);
  proxy.delayMs = 300; // 8 uploads per day take ≥ 2.4 s: a kill 0–3 s in mostly lands mid-export
  try {
    const { project, bucket, sent } = await exportSourceOf(p, "crash-export", "2026-04-01", proxy.endpoint);
    return await trials("crash", "export (platform kill -9)", k.trials, async (i) => {
      const api = platformApi(p);
      const dest = await newDestination(api, bucket, `t${i}`, proxy.endpoint);
      const id = await startExport(api, dest, project, "2026-04-01T00:00:00Z", "2026-04-03T00:00:00Z");
      await sleep(rand() * 3000);
      const at = (await api("GET", `/api/v1/bulk-exports/${id}`)).json.status as string;
      p = await p.crashAndRestart({ wholeGroup: rand() < 0.5 });
      const end = await exportEnd(() => platformApi(p), id, RESTART_WAIT_MS);
      check(end.status === "Completed", `export ended ${end.status}: ${end.errors.join("; ")}`);
      return {
        [`killed while ${at}`]: 1,
        rows: await checkExportedRows(bucket, `t${i}`, sent),
        "retries recorded": end.retries,
      };
    });
  } finally {
    await proxy.close();
    await p.stop();
  }
}

/** Every run id of a project, read back through POST /api/v1/runs/query page by page. */
async function storedIds(api: Api, project: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null | undefined;
  do {
    const r = await api("POST", "/api/v1/runs/query", { session: [project], limit: 100, cursor });
    check(r.status === 200, `runs/query: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    ids.push(...r.json.runs.map((x: { id: string }) => x.id));
    cursor = r.json.cursors?.next;
  } while (cursor);
  return ids;
}

/**
 * 100-run batches from the langsmith client (batchIngestRuns, 4 senders) from before the kill (0–3 s in) until
 * the platform is back. Every batch the client saw accepted must be stored; the client then sends what failed
 * (and one accepted batch again): stored = sent, each once.
 */
async function ingestScenario(k: Knobs, rand: () => number): Promise<Row> {
  let p = await startPlatform({ LOG_LEVEL: "error" });
  try {
    return await trials("crash", "batch ingestion (platform kill -9)", k.trials, async (i) => {
      const project = `crash-ingest-${i}`;
      const client = () =>
        new LangSmith({ apiUrl: `${p.base}/api/v1`, apiKey: p.facts.api_key, autoBatchTracing: false });
      let sdk = client();
      type Batch = ReturnType<typeof runAt>[];
      const failed: Batch[] = [];
      const accepted: Batch[] = [];
      let next = 0;
      const send = (b: Batch) => sdk.batchIngestRuns({ runCreates: b as never });
      let restarted = false;
      const crash = (async () => {
        await sleep(rand() * 3000);
        p = await p.crashAndRestart({ wholeGroup: rand() < 0.5 });
      })().finally(() => {
        restarted = true; // or failed to: the senders stop either way
      });
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (!restarted || next < 20) {
            const from = 100 * next++;
            const b = Array.from({ length: 100 }, (_, n) => runAt(from + n, project));
            await send(b).then(
              () => accepted.push(b),
              () => failed.push(b),
            );
          }
        }),
      );
      await crash;
      const sent = 100 * next;
      const api = platformApi(p);
      const projectId = (await api("GET", `/api/v1/sessions?name=${project}`)).json[0]?.id as string;
      check(projectId, "the project is gone");
      const before = new Set(await storedIds(api, projectId));
      const lost = accepted.flat().filter((r) => !before.has(r.id)).length;
      check(lost === 0, `${lost} runs of accepted batches lost`);
      sdk = client();
      for (const b of [...failed, ...accepted.slice(0, 1)]) await send(b);
      const after = await storedIds(api, projectId);
      const unique = new Set(after);
      check(unique.size === after.length, `${after.length - unique.size} runs listed twice`);
      check(after.length === sent, `${after.length} runs stored of ${sent} sent`);
      return { sent, "batches the client gave up on (sent again)": failed.length };
    });
  } finally {
    await p.stop();
  }
}

/** A new deployment per trial, the platform's whole group killed 0–4 s into its pipeline (the status then noted). */
async function revisionScenario(k: Knobs, rand: () => number): Promise<Row> {
  let p = await startPlatform({ LOG_LEVEL: "error" });
  const repo = gitRepo(graphRepoFiles(["step"]), { v2: { "NOTES.md": "v2\n" } });
  try {
    return await trials("crash", "revision build (platform group kill -9)", k.trials, async (i) => {
      let api = platformApi(p);
      const created = await api("POST", "/v2/deployments", {
        name: `crash-${i}-${crypto.randomUUID().slice(0, 6)}`,
        source: "github",
        source_config: { repo_url: repo.dir, deployment_type: "dev" },
        source_revision_config: { repo_ref: "main" },
      });
      check(created.status === 201, `create: ${created.status} ${JSON.stringify(created.json)}`);
      const id = created.json.id as string;
      await sleep(rand() * 4000);
      const revisionPath = `/v2/deployments/${id}/revisions/${created.json.latest_revision_id}`;
      const at = (await api("GET", revisionPath)).json.status as string;
      p = await p.crashAndRestart({ wholeGroup: true });
      api = platformApi(p);
      const final = (revision: string) =>
        waitFor(
          "the revision to end",
          async () => {
            const r = (await api("GET", `/v2/deployments/${id}/revisions/${revision}`)).json;
            return /DEPLOYED|FAILED|INTERRUPTED/.test(r.status) ? r : undefined;
          },
          RESTART_WAIT_MS,
          250,
        );
      const first = await final(created.json.latest_revision_id);
      let redeployed = 0;
      if (first.status !== "DEPLOYED") {
        check(
          /_FAILED$/.test(first.status) && first.error,
          `revision ended ${first.status} without a reason`,
        );
        const patched = await api("PATCH", `/v2/deployments/${id}`, {
          source_revision_config: { repo_ref: "v2" },
        });
        const second = await final(patched.json.latest_revision_id);
        check(second.status === "DEPLOYED", `the next revision ended ${second.status}: ${second.error}`);
        redeployed = 1;
      }
      check((await api("GET", `/agents/${id}/ok`)).status === 200, "the deployment does not answer");
      return {
        [`killed while ${at}`]: 1,
        "deployed at once": 1 - redeployed,
        "failed with a reason, then redeployed": redeployed,
      };
    });
  } finally {
    await p.stop();
    repo.remove();
  }
}

/** The pid of a deployment's runtime: a child of the platform process running the runtime bundle. */
export function runtimePids(platformPid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== platformPid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("agent-runtime.mjs"))
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Three runs of a 3-node graph (3.6 s) on three threads; `kill` strikes 0–2.5 s in; each ends success, nodes once. */
async function agentTrial(client: () => Client, rand: () => number, kill: () => Promise<void>) {
  let c = client();
  const started = [];
  for (let t = 0; t < 3; t++) {
    const thread = await c.threads.create();
    const run = await c.runs.create(thread.thread_id, "agent", { input: { items: ["in"] } });
    started.push({ thread: thread.thread_id, run: run.run_id });
  }
  await sleep(rand() * 2500);
  const statuses = await Promise.all(started.map(async (s) => (await c.runs.get(s.thread, s.run)).status));
  await kill();
  c = client();
  let retried = 0;
  for (const s of started) {
    const done = await waitFor(
      "the run to end",
      async () => {
        const r = await c.runs.get(s.thread, s.run);
        return ["success", "error", "interrupted", "timeout"].includes(r.status) ? r : undefined;
      },
      RESTART_WAIT_MS,
      250,
    );
    check(done.status === "success", `a run ended ${done.status}`);
    const values = (await c.threads.getState(s.thread)).values as { items: string[] };
    check(
      JSON.stringify(values.items) === JSON.stringify(["in", "a", "b", "c"]),
      `a run's values: ${JSON.stringify(values.items)}`,
    );
    // The run's stream keeps a metadata frame per attempt: more than one = it was retried.
    const frames = await collect(c.runs.joinStream(s.thread, s.run, { lastEventId: "-1" }));
    if (frames.filter((f) => f.event === "metadata").length > 1) retried++;
  }
  return {
    runs: started.length,
    "running at the kill": statuses.filter((x) => x === "running").length,
    "retried runs": retried,
  };
}

/** Agent runs through a platform kill (whole group) and through a kill of the deployment's runtime alone. */
async function agentScenarios(k: Knobs, rand: () => number): Promise<Row[]> {
  let p = await startPlatform({ LOG_LEVEL: "error", AGENT_RUN_LEASE_MS: "2000" });
  const repo = gitRepo(sleepyGraphFiles({ a: 300, b: 3000, c: 300 }));
  try {
    const { deploymentId } = await deployedClient(p.facts, repo.dir, "crash-runs");
    const client = () => agentClient(p.facts, deploymentId);
    const platformRow = await trials("crash", "agent runs (platform group kill -9)", k.trials, (_i) =>
      agentTrial(client, rand, async () => {
        p = await p.crashAndRestart({ wholeGroup: true });
      }),
    );
    const runtimeRow = await trials("crash", "agent runs (runtime alone kill -9)", k.trials, async (_i) => {
      let killed = 0;
      const figures = await agentTrial(client, rand, async () => {
        for (const pid of runtimePids(p.facts.pid)) {
          process.kill(pid, "SIGKILL");
          killed++;
        }
      });
      check(killed > 0, "no runtime process found to kill");
      return { ...figures, "runtimes killed": killed };
    });
    return [platformRow, runtimeRow];
  } finally {
    await p.stop();
    repo.remove();
  }
}

export async function crashResume(k: Knobs): Promise<Row[]> {
  const rand = seededRandom(k.seed ^ 0x3c3c);
  const rows: Row[] = [];
  if (wanted(k, "export")) rows.push(await exportScenario(k, rand));
  if (wanted(k, "ingest")) rows.push(await ingestScenario(k, rand));
  if (wanted(k, "revision")) rows.push(await revisionScenario(k, rand));
  if (wanted(k, "agent")) rows.push(...(await agentScenarios(k, rand)));
  return rows;
}
