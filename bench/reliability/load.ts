import { Agent } from "node:http";
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { agentClient, deployedClient } from "../../harness/agents.ts";
import { processCustomerS3 } from "../../harness/customer-s3.ts";
import { platformApi, s3Proxy, waitFor } from "../../harness/export.ts";
import { type RunningPlatform, rssOf, startPlatform } from "../../harness/platform.ts";
import { gitRepo } from "../../harness/repos.ts";
import { tableName } from "../../shared/tables.ts";
import { countStored, post, runAt } from "../ingest.ts";
import {
  checkExportedRows,
  EXPORT_ENV,
  exportEnd,
  exportSourceOf,
  newDestination,
  sleepyGraphFiles,
  startExport,
} from "./exports.ts";
import { check, type Knobs, type Row, sleep, trials, wanted } from "./summary.ts";

// Item 5: load held — ingestion as the ingest benchmark drives it (16 senders of 100-run batches, closed loop) for
// RELIABILITY_LOAD_SECONDS with the platform's RSS sampled every second; 50 runs created at once on one thread with
// multitask_strategy rollback (one survivor, no checkpoint left of a rolled-back run); 16 exports at once in one
// workspace (15 may run, the 16th waits, then runs; all complete with their rows).
const SENDERS = 16;
const BATCH = 100;

const quantile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
};

function ddbOf(p: RunningPlatform) {
  return new DynamoDBClient({
    endpoint: p.facts.dynamodb_endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: p.facts.s3.access_key_id, secretAccessKey: p.facts.s3.secret_access_key },
  });
}

/** Ingestion for `seconds`: runs/s, batch latency p50/p99, RSS start/end/peak, runs lost. */
async function ingestion(k: Knobs): Promise<Row> {
  const p = await startPlatform({ LOG_LEVEL: "error" });
  try {
    return await trials("load", `ingestion, ${k.loadSeconds} s (16 × 100-run batches)`, 1, async () => {
      const headers = { "x-api-key": p.facts.api_key, "x-tenant-id": p.facts.tenant_id };
      const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
      const url = `${p.base}/api/v1/runs/batch`;
      const session = "reliability-load";
      // Warm-up (JIT, connections, the project's creation, DynamoDB Local's first writes): two rounds of the
      // senders' batches, untimed; then the RSS the load starts from.
      const WARM = 2 * SENDERS * BATCH;
      for (let round = 0; round < 2; round++)
        await Promise.all(
          Array.from({ length: SENDERS }, (_, s) => {
            const from = 1_000_000 + (round * SENDERS + s) * BATCH;
            const batch = Array.from({ length: BATCH }, (_, i) => runAt(from + i, session));
            return post(url, headers, JSON.stringify({ post: batch }), agent);
          }),
        );
      const rss: number[] = [rssOf(p.facts.pid).rssMb];
      const sampler = setInterval(() => rss.push(rssOf(p.facts.pid).rssMb), 1000);
      const latencies: number[] = [];
      let sent = 0;
      let rejected = 0;
      const until = performance.now() + k.loadSeconds * 1000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (performance.now() < until) {
            const from = sent;
            sent += BATCH;
            const batch = Array.from({ length: BATCH }, (_, i) => runAt(from + i, session));
            const s0 = performance.now();
            const status = await post(url, headers, JSON.stringify({ post: batch }), agent).catch(() => 0);
            latencies.push(performance.now() - s0);
            if (status !== 202) rejected += BATCH;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      rss.push(rssOf(p.facts.pid).rssMb);
      agent.destroy();
      const projects = (await platformApi(p)("GET", `/api/v1/sessions?name=${session}`)).json;
      const stored = await countStored(ddbOf(p), p.facts.tenant_id, projects[0].id);
      const lost = sent + WARM - rejected - stored;
      check(rejected === 0, `${rejected} runs rejected`);
      check(lost === 0, `${lost} runs lost (${stored} stored of ${sent + WARM})`);
      return {
        "runs/s": sent / seconds,
        "batch p50 ms": quantile(latencies, 0.5),
        "batch p99 ms": quantile(latencies, 0.99),
        "RSS start MB": rss[0]!,
        "RSS end MB": rss.at(-1)!,
        "RSS peak MB": Math.max(...rss),
        "runs lost": lost,
      };
    });
  } finally {
    await p.stop();
  }
}

/** Checkpoint items of a thread (any namespace) as stored, read straight from the table. */
async function checkpointItems(p: RunningPlatform, thread: string) {
  const items: Record<string, any>[] = [];
  let key: Record<string, any> | undefined;
  do {
    const out = await ddbOf(p).send(
      new ScanCommand({
        TableName: tableName("checkpoints"),
        FilterExpression: "contains(PK, :t)",
        ExpressionAttributeValues: { ":t": { S: thread } },
        ConsistentRead: true,
        ExclusiveStartKey: key,
      }),
    );
    items.push(...(out.Items ?? []).map((i) => unmarshall(i)));
    key = out.LastEvaluatedKey;
  } while (key);
  return items;
}

/** `k.rollbacks` runs created at once on one thread, each rolling back the one before. */
async function rollbacks(k: Knobs, p: RunningPlatform, deploymentId: string): Promise<Row> {
  return trials("load", `${k.rollbacks} concurrent rollbacks on one thread`, 1, async () => {
    const client = agentClient(p.facts, deploymentId);
    const thread = (await client.threads.create()).thread_id;
    const latencies: number[] = [];
    const created = await Promise.all(
      Array.from({ length: k.rollbacks }, async (_, i) => {
        const t0 = performance.now();
        try {
          const run = await client.runs.create(thread, "agent", {
            input: { items: [`in-${i}`] },
            multitaskStrategy: "rollback",
          });
          return run.run_id;
        } catch {
          return undefined;
        } finally {
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const accepted = created.filter(Boolean).length;
    await waitFor(
      "the thread to settle",
      async () => {
        const runs = await client.runs.list(thread);
        return runs.every((r) => !["pending", "running"].includes(r.status)) && runs;
      },
      180_000,
      250,
    );
    const runs = await client.runs.list(thread, { limit: 100 });
    check(runs.length === 1, `${runs.length} runs survived`);
    const survivor = runs[0]!;
    check(survivor.status === "success", `the survivor ended ${survivor.status}`);
    const items = await checkpointItems(p, thread);
    const orphanCheckpoints = items.filter(
      (i) => i.kind === "checkpoint" && i.run_id && i.run_id !== survivor.run_id,
    );
    // The method's own check: the survivor's checkpoints carry its run id, so a rolled-back run's would carry theirs.
    check(
      items.some((i) => i.kind === "checkpoint" && i.run_id === survivor.run_id),
      "no checkpoint carries the survivor's run id",
    );
    const orphanSks = orphanCheckpoints.map((i) => String(i.SK));
    const orphanItems = items.filter((i) => orphanSks.some((sk) => String(i.SK).startsWith(sk)));
    check(orphanCheckpoints.length === 0, `${orphanCheckpoints.length} checkpoints of rolled-back runs left`);
    return {
      "runs accepted": accepted,
      survivors: runs.length,
      "create p50 ms": quantile(latencies, 0.5),
      "create p99 ms": quantile(latencies, 0.99),
      "checkpoint items": items.length,
      "orphan checkpoints": orphanCheckpoints.length,
      "orphan items": orphanItems.length,
    };
  });
}

/** `k.exports` exports created at once in one workspace through a slowed destination. */
async function concurrentExports(k: Knobs, p: RunningPlatform): Promise<Row> {
  const proxy = await s3Proxy((await processCustomerS3()).s3.endpoint);
  proxy.delayMs = 200;
  try {
    const { project, bucket, sent } = await exportSourceOf(p, "load-exports", "2026-06-01", proxy.endpoint);
    return await trials("load", `${k.exports} concurrent exports in one workspace`, 1, async () => {
      const api = platformApi(p);
      const dests = await Promise.all(
        Array.from({ length: k.exports }, (_, i) => newDestination(api, bucket, `e${i}`, proxy.endpoint)),
      );
      const t0 = performance.now();
      const ids = await Promise.all(
        dests.map((d) => startExport(api, d, project, "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z")),
      );
      let maxRunning = 0;
      let waitedWhileFull = 0;
      const ended = new Map<string, number>();
      while (ended.size < ids.length && performance.now() - t0 < 600_000) {
        const statuses = await Promise.all(
          ids.map(async (id) => (await api("GET", `/api/v1/bulk-exports/${id}`)).json.status as string),
        );
        const running = statuses.filter((s) => s === "Running").length;
        maxRunning = Math.max(maxRunning, running);
        if (running >= 15)
          waitedWhileFull = Math.max(waitedWhileFull, statuses.filter((s) => s === "Created").length);
        statuses.forEach((s, i) => {
          if (["Completed", "Failed", "Cancelled", "TimedOut"].includes(s) && !ended.has(ids[i]!))
            ended.set(ids[i]!, (performance.now() - t0) / 1000);
        });
        await sleep(200);
      }
      let completed = 0;
      for (const [i, id] of ids.entries()) {
        const end = await exportEnd(() => api, id, 10_000);
        check(end.status === "Completed", `export ${i} ended ${end.status}: ${end.errors.join("; ")}`);
        await checkExportedRows(bucket, `e${i}`, sent);
        completed++;
      }
      const seconds = [...ended.values()];
      return {
        completed,
        "max running at once": maxRunning,
        "waiting while 15 ran": waitedWhileFull,
        "export p50 s": quantile(seconds, 0.5),
        "export p99 s": quantile(seconds, 0.99),
      };
    });
  } finally {
    await proxy.close();
  }
}

export async function loadHeld(k: Knobs): Promise<Row[]> {
  const rows: Row[] = [];
  if (wanted(k, "ingestion")) rows.push(await ingestion(k));
  if (!wanted(k, "rollbacks") && !wanted(k, "exports")) return rows;
  const p = await startPlatform(EXPORT_ENV);
  const repo = gitRepo(sleepyGraphFiles({ a: 200, b: 800 }));
  try {
    if (wanted(k, "rollbacks")) {
      const { deploymentId } = await deployedClient(p.facts, repo.dir, "load-rollback");
      rows.push(await rollbacks(k, p, deploymentId));
    }
    if (wanted(k, "exports")) rows.push(await concurrentExports(k, p));
    return rows;
  } finally {
    await p.stop();
    repo.remove();
  }
}
