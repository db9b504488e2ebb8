import { BatchGetItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { processCustomerS3 } from "../harness/customer-s3.ts";
import { pointAwsAt, rssOf, sampleRss, startPlatform } from "../harness/platform.ts";
import { batchWrite } from "../shared/aws/batch.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { toItem } from "../shared/aws/ddb.ts";
import { config } from "../shared/config.ts";
import { toRow } from "../shared/export/exporter.ts";
import { ParquetFileWriter } from "../shared/export/parquet/writer.ts";
import { EXPORT_FIELDS } from "../shared/records/export-fields.ts";
import { deriveFields } from "../shared/runs/derive.ts";
import { buildPostItem, partitionKey } from "../shared/runs/store.ts";
import { tableName } from "../shared/tables.ts";
import { fmt } from "./load.ts";

// npm run bench -- export: N runs in one day of one project (N = 100k and 1M; BENCH_EXPORT_SIZES to change),
// exported by the real state machine to the local S3. Beside it, in the same run: a plain paginated
// DynamoDB Query over the same partition with BatchGetItem of its items (the reference), and the Parquet encoder alone. Peak RSS is the
// platform process's during each export: constant memory means 1M ≈ 100k.
const SIZES = (process.env.BENCH_EXPORT_SIZES ?? "100000,1000000").split(",").map(Number);

function run(i: number, day: string) {
  // Spread over the day and kept inside it (the last second is left for the i % 1000 jitter).
  const start = Date.parse(`${day}T00:00:00Z`) + Math.floor((i * 86_399_000) / 1_000_000) + (i % 1000);
  const id = crypto.randomUUID();
  const llm = i % 2 === 0;
  return {
    id,
    trace_id: id,
    name: llm ? "ChatModel" : "Chain",
    run_type: llm ? "llm" : "chain",
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 300).toISOString(),
    inputs: { messages: [{ role: "user", content: `question ${i}: what is the capital of France?` }] },
    outputs: llm
      ? {
          choices: [{ message: { role: "assistant", content: "The capital of France is Paris." } }],
          usage: { prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 },
        }
      : { answer: "Paris" },
    extra: { metadata: { user: `u${i % 50}` } },
    tags: i % 3 ? [] : ["bench"],
  };
}

/** Loads `n` stored runs straight into DynamoDB (the ingestion path is measured by `ingest`). */
async function load(tenant: string, session: string, day: string, n: number) {
  let next = 0;
  const receivedAt = new Date().toISOString();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        const from = next;
        next += 25;
        const items = [];
        for (let i = from; i < Math.min(from + 25, n); i++) {
          const r = run(i, day);
          const { item, content } = await buildPostItem(tenant, session, r as never, receivedAt);
          items.push({ put: { ...item, ...deriveFields(content as never, []) } });
        }
        await batchWrite("runs", items);
      }
    }),
  );
}

/**
 * The reference: every item of the day's partition through a plain paginated Query of the index, shard after
 * shard, and BatchGetItem of each page's items from the table (the index holds their keys and ids only).
 */
async function plainQuery(tenant: string, session: string, day: string) {
  const t0 = performance.now();
  let rows = 0;
  const table = tableName("runs");
  for (let shard = 0; shard < config.runs.shards; shard++) {
    let key: Record<string, any> | undefined;
    do {
      const out = await dynamo().send(
        new QueryCommand({
          TableName: table,
          IndexName: "GSI1",
          KeyConditionExpression: "GSI1PK = :pk",
          ExpressionAttributeValues: toItem({ ":pk": partitionKey(tenant, session, day, shard) }),
          ExclusiveStartKey: key,
        }),
      );
      const keys = (out.Items ?? []).map((i) => ({ PK: i.PK, SK: i.SK }));
      const chunks = Array.from({ length: Math.ceil(keys.length / 100) }, (_, c) =>
        keys.slice(c * 100, c * 100 + 100),
      );
      await Promise.all(
        chunks.map(async (Keys) => {
          let pending: typeof Keys | undefined = Keys;
          while (pending?.length) {
            const got = await dynamo().send(
              new BatchGetItemCommand({ RequestItems: { [table]: { Keys: pending } } }),
            );
            rows += got.Responses?.[table]?.length ?? 0;
            pending = got.UnprocessedKeys?.[table]?.Keys as typeof Keys | undefined;
          }
        }),
      );
      key = out.LastEvaluatedKey;
    } while (key);
  }
  return { rows, seconds: (performance.now() - t0) / 1000 };
}

/** The Parquet encoder alone over rows shaped like the exported ones. */
async function encoderRate(tenant: string, session: string, n: number) {
  const items = [];
  for (let i = 0; i < 1000; i++) {
    const { item, content } = await buildPostItem(
      tenant,
      session,
      run(i, "2026-02-01") as never,
      new Date().toISOString(),
    );
    items.push(await toRow({ ...item, ...deriveFields(content as never, []) }, EXPORT_FIELDS));
  }
  const t0 = performance.now();
  let writer = new ParquetFileWriter({ fields: EXPORT_FIELDS, formatVersion: "v1", compression: "gzip" });
  for (let i = 0; i < n; i++) {
    writer.append(items[i % items.length]!);
    if (writer.bytes >= 64 * 1024 * 1024) {
      await writer.finish();
      writer = new ParquetFileWriter({ fields: EXPORT_FIELDS, formatVersion: "v1", compression: "gzip" });
    }
  }
  await writer.finish();
  return n / ((performance.now() - t0) / 1000);
}

export async function exportBench() {
  const p = await startPlatform({ DYNAMODB_IN_MEMORY: "1", LOG_LEVEL: "warn" });
  try {
    const { facts } = p;
    pointAwsAt(facts);
    const headers = {
      "x-api-key": facts.api_key,
      "x-tenant-id": facts.tenant_id,
      "content-type": "application/json",
    };
    const api = async (method: string, path: string, body?: unknown) =>
      (
        await fetch(`${p.base}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json() as Promise<any>;
    // The destination is a workspace's own S3 (the platform's is refused as one), in this process.
    const customer = await processCustomerS3();
    await new S3Client({
      endpoint: customer.s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: customer.s3.access_key_id, secretAccessKey: customer.s3.secret_access_key },
    }).send(new CreateBucketCommand({ Bucket: "bench-export" }));
    const dest = await api("POST", "/api/v1/bulk-exports/destinations", {
      destination_type: "s3",
      display_name: "bench",
      config: { bucket_name: "bench-export", prefix: "bench", endpoint_url: customer.s3.endpoint },
      credentials: {
        access_key_id: customer.s3.access_key_id,
        secret_access_key: customer.s3.secret_access_key,
      },
    });
    const results: string[] = [];
    for (const [k, n] of SIZES.entries()) {
      const project = await api("POST", "/api/v1/sessions", { name: `bench-export-${n}` });
      const day = `2026-01-${String(10 + k).padStart(2, "0")}`;
      const tl = performance.now();
      await load(facts.tenant_id, project.id, day, n);
      const loadSeconds = (performance.now() - tl) / 1000;
      const ref = await plainQuery(facts.tenant_id, project.id, day);
      const before = rssOf(facts.pid).rssMb;
      const rss = sampleRss(facts.pid, 50);
      const t0 = performance.now();
      const created = await api("POST", "/api/v1/bulk-exports", {
        bulk_export_destination_id: dest.id,
        session_id: project.id,
        start_time: `${day}T00:00:00Z`,
        end_time: `${day}T23:59:59.999Z`,
      });
      let status = created.status;
      while (!["Completed", "Failed", "Cancelled", "TimedOut"].includes(status)) {
        await new Promise((r) => setTimeout(r, 200));
        status = (await api("GET", `/api/v1/bulk-exports/${created.id}`)).status;
      }
      const seconds = (performance.now() - t0) / 1000;
      const peak = rss.stop();
      const runs = await api("GET", `/api/v1/bulk-exports/${created.id}/runs`);
      const rows = runs.reduce((s: number, r: any) => s + r.metadata.result.rows_written, 0);
      const files = runs.reduce((s: number, r: any) => s + r.metadata.result.exported_files.length, 0);
      const encoder = await encoderRate(facts.tenant_id, project.id, Math.min(n, 200_000));
      const exportRate = rows / seconds;
      const queryRate = ref.rows / ref.seconds;
      results.push(
        `| ${n.toLocaleString("en")} | ${status} ${rows.toLocaleString("en")} rows (Query: ${ref.rows.toLocaleString("en")}), ${files} files | ${fmt(exportRate, 0)} | ${fmt(queryRate, 0)} | ${fmt(exportRate / queryRate, 2)} | ${fmt(encoder, 0)} | ${fmt(before, 0)} → ${fmt(peak, 0)} |`,
      );
      console.log(`loaded ${n} runs in ${fmt(loadSeconds, 0)} s; exported: ${results.at(-1)}`);
    }
    console.log("export: one day of one project, v1 Parquet with gzip, DynamoDB Local in memory");
    console.log(
      "| N | result | export rows/s | plain Query rows/s (reference) | × Query | encoder alone rows/s | platform peak RSS MB |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const r of results) console.log(r);
    console.log("goals: export ≥ 0.8 × plain Query; peak RSS at 1M ≤ 1.2 × at 100k and < 300 MB");
  } finally {
    await p.stop();
  }
}
