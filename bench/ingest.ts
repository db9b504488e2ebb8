import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchWriteItemCommand, DynamoDBClient, QueryCommand } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { Client } from "langsmith";
import { type RunningPlatform, sampleRss, startPlatform } from "../harness/platform.ts";
import { newBackendToken } from "../infra/local/backend-token.ts";
import { startDynamoDbOnAPort } from "../infra/local/cloud.ts";
import { createTables, dynamoDbLocalClient } from "../infra/local/dynamodb.ts";
import { tableName } from "../shared/tables.ts";
import { fmt } from "./load.ts";
import { otlpRequests } from "./otlp.ts";

// npm run bench -- ingest: runs/s accepted by POST /runs/batch (16 concurrent senders of 100-run batches),
// by the real langsmith SDK over /runs/multipart and spans/s by POST /otel/v1/traces (OTLP protobuf, 100 spans), beside the raw DynamoDB Local BatchWriteItem rate of
// items of the same shape measured in the same run. Every run is counted back afterwards: count after =
// count sent. Peak RSS is the platform process's, sampled under the load.
const SENDERS = 16;
const BATCH = 100;
const RUNS = Number(process.env.BENCH_INGEST_RUNS ?? 20_000);
export const DAY = "2026-01-05";

export function runAt(i: number, session: string) {
  const start = Date.parse(`${DAY}T00:00:00Z`) + i * 3;
  const trace = randomUUID();
  const stamp = new Date(start).toISOString().replace(/[-:.]/g, "").replace("T", "T").slice(0, 15);
  return {
    id: trace,
    trace_id: trace,
    dotted_order: `${stamp}${String(start % 1000).padStart(3, "0")}000Z${trace}`,
    name: "ChatModel",
    run_type: "llm",
    session_name: session,
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 420).toISOString(),
    inputs: { messages: [{ role: "user", content: `question ${i}: what is the capital of France?` }] },
    outputs: {
      choices: [{ message: { role: "assistant", content: "The capital of France is Paris." } }],
      usage: { prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 },
    },
    extra: { metadata: { ls_provider: "openai", ls_model_name: "gpt-4o-mini", user: `u${i % 50}` } },
    tags: ["bench", `shard-${i % 8}`],
  };
}

/** Closed loop: `senders` workers each take the next batch until none is left. */
export async function drive<T>(batches: T[], senders: number, send: (b: T) => Promise<void>) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (next < batches.length) await send(batches[next++]!);
    }),
  );
  return (performance.now() - t0) / 1000;
}

export function chunks<T>(items: T[], size: number) {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The reference: BatchWriteItem of items shaped as stored runs (same keys, indexes and payload sizes), straight to a
 * DynamoDB Local of the bench's own (the platform's answers only its policy proxy), on disk as the platform's is
 * unless DYNAMODB_IN_MEMORY=1.
 */
async function rawBatchWrite(tenant: string) {
  const token = newBackendToken();
  const dir = process.env.DYNAMODB_IN_MEMORY === "1" ? undefined : mkdtempSync(join(tmpdir(), "bench-ddb-"));
  const local = await startDynamoDbOnAPort(undefined, dir, token);
  const ddb = dynamoDbLocalClient({ endpoint: local.endpoint, token });
  try {
    await createTables(ddb);
    return await batchWrite(ddb, tenant);
  } finally {
    ddb.destroy();
    await local.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

async function batchWrite(ddb: DynamoDBClient, tenant: string) {
  const items = Array.from({ length: RUNS }, (_, i) => {
    const r = runAt(i, "raw");
    return marshall({
      PK: `${tenant}#raw-${r.id}`,
      SK: "run",
      GSI1PK: `${tenant}#raw#${DAY}#${i % 4}`,
      GSI1SK: `${r.start_time}#${r.id}`,
      GSI2PK: `${tenant}#raw-${r.trace_id}`,
      GSI2SK: r.dotted_order,
      ...r,
      inputs_json: JSON.stringify(r.inputs),
      outputs_json: JSON.stringify(r.outputs),
      extra_json: JSON.stringify(r.extra),
      messages_json: JSON.stringify([r.inputs.messages[0], r.outputs.choices[0]!.message]),
      prompt_tokens: 14,
      completion_tokens: 8,
      total_tokens: 22,
      total_cost: 0.0000069,
      status: "success",
      parent_run_ids: [],
      is_root: true,
    });
  });
  // 100-item "batches" as the ingestion senders use, each written as four 25-item BatchWriteItems in parallel.
  return drive(chunks(items, BATCH), SENDERS, async (batch) => {
    await Promise.all(
      chunks(batch, 25).map(async (chunk) => {
        let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
        while (pending.length) {
          const out = await ddb.send(
            new BatchWriteItemCommand({ RequestItems: { [tableName("runs")]: pending } }),
          );
          pending = (out.UnprocessedItems?.[tableName("runs")] ?? []) as typeof pending;
        }
      }),
    );
  });
}

export function post(url: string, headers: Record<string, string>, body: string | Buffer, agent: Agent) {
  return new Promise<number>((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Runs stored for a project on DAY, counted straight from the partition index. */
export async function countStored(ddb: DynamoDBClient, tenant: string, session: string) {
  let total = 0;
  for (let shard = 0; shard < 4; shard++) {
    let key: Record<string, any> | undefined;
    do {
      const out = await ddb.send(
        new QueryCommand({
          TableName: tableName("runs"),
          IndexName: "GSI1",
          KeyConditionExpression: "GSI1PK = :p",
          ExpressionAttributeValues: { ":p": { S: `${tenant}#${session}#${DAY}#${shard}` } },
          Select: "COUNT",
          ExclusiveStartKey: key,
        }),
      );
      total += out.Count ?? 0;
      key = out.LastEvaluatedKey;
    } while (key);
  }
  return total;
}

async function projectId(p: RunningPlatform, name: string, headers: Record<string, string>) {
  const res = await fetch(`${p.base}/api/v1/sessions?name=${encodeURIComponent(name)}`, { headers });
  const [project] = (await res.json()) as { id: string; run_count: number }[];
  return project!;
}

export async function ingestBench() {
  const p = await startPlatform();
  try {
    const { facts } = p;
    const headers = { "x-api-key": facts.api_key, "x-tenant-id": facts.tenant_id };
    const ddb = new DynamoDBClient({
      endpoint: facts.dynamodb_endpoint,
      region: "us-east-1",
      // The operator's keys: the endpoint is the platform's policy proxy.
      credentials: { accessKeyId: facts.s3.access_key_id, secretAccessKey: facts.s3.secret_access_key },
    });
    // Warm both paths (JIT, connections, the project's first-use creation).
    const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
    await post(`${p.base}/api/v1/runs/batch`, headers, JSON.stringify({ post: [runAt(0, "warm")] }), agent);

    const rawSeconds = await rawBatchWrite(facts.tenant_id);
    const rawRate = RUNS / rawSeconds;

    const batchRuns = Array.from({ length: RUNS }, (_, i) => runAt(i, "bench-batch"));
    const rss = sampleRss(facts.pid);
    let rejected = 0;
    const batchSeconds = await drive(chunks(batchRuns, BATCH), SENDERS, async (batch) => {
      const status = await post(
        `${p.base}/api/v1/runs/batch`,
        headers,
        JSON.stringify({ post: batch }),
        agent,
      );
      if (status !== 202) rejected += batch.length;
    });
    const batchPeak = rss.stop();
    const batchRate = RUNS / batchSeconds;

    // The real SDK: createRun with auto-batching, which sends /runs/multipart requests.
    const sdkRuns = Number(process.env.BENCH_SDK_RUNS ?? Math.min(RUNS, 10_000));
    const client = new Client({ apiUrl: `${p.base}/api/v1`, apiKey: facts.api_key, autoBatchTracing: true });
    const rss2 = sampleRss(facts.pid);
    const t0 = performance.now();
    for (let i = 0; i < sdkRuns; i++) {
      const { session_name, ...run } = runAt(i, "bench-sdk");
      await client.createRun({ ...run, project_name: session_name } as any);
    }
    await client.awaitPendingTraceBatches();
    const sdkSeconds = (performance.now() - t0) / 1000;
    const sdkPeak = rss2.stop();
    const sdkRate = sdkRuns / sdkSeconds;

    // OTLP: the same calls as spans through /otel/v1/traces, into their project by the Langsmith-Project header.
    const otlpBodies = otlpRequests(RUNS, BATCH, Date.parse(`${DAY}T00:00:00Z`));
    const otlpHeaders = {
      ...headers,
      "content-type": "application/x-protobuf",
      "langsmith-project": "bench-otlp",
    };
    const rss3 = sampleRss(facts.pid);
    let otlpRejected = 0;
    const otlpSeconds = await drive(otlpBodies, SENDERS, async (body) => {
      const status = await post(`${p.base}/api/v1/otel/v1/traces`, otlpHeaders, body, agent);
      if (status !== 200) otlpRejected += BATCH;
    });
    const otlpPeak = rss3.stop();
    const otlpRate = RUNS / otlpSeconds;

    const batchProject = await projectId(p, "bench-batch", headers);
    const sdkProject = await projectId(p, "bench-sdk", headers);
    const storedBatch = await countStored(ddb, facts.tenant_id, batchProject.id);
    const storedSdk = await countStored(ddb, facts.tenant_id, sdkProject.id);
    const otlpProject = await projectId(p, "bench-otlp", headers);
    const storedOtlp = await countStored(ddb, facts.tenant_id, otlpProject.id);

    console.log(
      `ingest: ${RUNS} runs per path, ${SENDERS} senders × ${BATCH}-run batches; one llm run ≈ 1 KB`,
    );
    console.log("| path | runs/s | × raw BatchWriteItem | sent | stored | project run_count | peak RSS MB |");
    console.log("|---|---|---|---|---|---|---|");
    console.log(`| DynamoDB Local BatchWriteItem (reference) | ${fmt(rawRate, 0)} | 1.00 | ${RUNS} | | | |`);
    console.log(
      `| POST /api/v1/runs/batch | ${fmt(batchRate, 0)} | ${fmt(batchRate / rawRate, 2)} | ${RUNS} | ${storedBatch} | ${batchProject.run_count} | ${fmt(batchPeak, 0)} |`,
    );
    console.log(
      `| langsmith SDK createRun → /runs/multipart | ${fmt(sdkRate, 0)} | ${fmt(sdkRate / rawRate, 2)} | ${sdkRuns} | ${storedSdk} | ${sdkProject.run_count} | ${fmt(sdkPeak, 0)} |`,
    );
    console.log(
      `| POST /api/v1/otel/v1/traces (OTLP protobuf, spans) | ${fmt(otlpRate, 0)} | ${fmt(otlpRate / rawRate, 2)} | ${RUNS} | ${storedOtlp} | ${otlpProject.run_count} | ${fmt(otlpPeak, 0)} |`,
    );
    const lost = RUNS - storedBatch + (sdkRuns - storedSdk) + (RUNS - storedOtlp);
    console.log(
      `runs lost: ${lost} (goal 0); batch requests rejected: ${rejected}; OTLP spans rejected: ${otlpRejected}; goal (issue 36): each path ≥ 0.9 × raw BatchWriteItem`,
    );
    agent.destroy();
  } finally {
    await p.stop();
  }
}
