import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { LocalFacts } from "../infra/local/cloud.ts";
import { ensureTenant, newApiKey, storeApiKey } from "../shared/auth/api-keys.ts";
import type { CustomerS3 } from "./customer-s3.ts";
import { grantTestFolders } from "./repos.ts";

// Shared pieces of the bulk export tests: buckets on the local S3, a fault-injecting S3 proxy, runs spread
// over days, polling, and DuckDB over the downloaded files.
/** An S3 and its keys: the platform's (LocalFacts) or a workspace's own (CustomerS3). */
type S3Account = Pick<LocalFacts, "s3"> | CustomerS3;

export function s3For(facts: S3Account, endpoint = facts.s3.endpoint) {
  return new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: facts.s3.access_key_id, secretAccessKey: facts.s3.secret_access_key },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

export async function newBucket(facts: S3Account, prefix = "exp"): Promise<string> {
  const name = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await s3For(facts).send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** A workspace of its own, so limits and listings of one test do not see another's exports. */
export async function newWorkspace() {
  const tenant = crypto.randomUUID();
  const key = newApiKey();
  await ensureTenant(tenant, "export test");
  await storeApiKey(key, [tenant]);
  await grantTestFolders(tenant);
  return { tenant, headers: { "X-Api-Key": key, "X-Tenant-Id": tenant } };
}

/** An answer a proxy gives in place of the real service's (a fault at the protocol level). */
export interface Fault {
  /** What it stands for in the figures: "500", "SlowDown", "Throttling", … */
  kind: string;
  status: number;
  contentType: string;
  body: string;
}

const s3Error = (kind: string, status: number, code: string): Fault => ({
  kind,
  status,
  contentType: "application/xml",
  body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected failure</Message></Error>`,
});
/** S3's answers to a failing or throttled request, and DynamoDB's to a throttled one. */
export const FAULTS = {
  s3InternalError: s3Error("500 InternalError", 500, "InternalError"),
  s3SlowDown: s3Error("503 SlowDown", 503, "SlowDown"),
  dynamoThrottled: {
    kind: "400 ProvisionedThroughputExceeded",
    status: 400,
    contentType: "application/x-amz-json-1.0",
    body: JSON.stringify({
      __type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
      message: "injected: the level of configured provisioned throughput for the table was exceeded",
    }),
  },
} satisfies Record<string, Fault>;

export interface Proxy {
  endpoint: string;
  /** Decides per request whether to answer a fault instead of forwarding it (any request, any service). */
  inject?: (req: IncomingMessage) => Fault | undefined;
  /** Faults answered by `inject` so far, by kind. */
  injected: Record<string, number>;
  /** Parquet uploads that got an injected 500 so far. */
  failed: number;
  /** The next `n` Parquet uploads fail with 500 InternalError. */
  failNext(n: number): void;
  /** Every Parquet upload waits this long first. */
  delayMs: number;
  /** Every request seen, as "METHOD /path?query". */
  requests: string[];
  close(): Promise<void>;
}

/**
 * An endpoint in front of a real one (S3, or DynamoDB Local: it forwards any HTTP) that can fail or slow down
 * Parquet uploads, or answer whatever `inject` decides (faults we cannot cause otherwise).
 */
export async function s3Proxy(target: string): Promise<Proxy> {
  const url = new URL(target);
  let failing = 0;
  const state: Proxy = {
    endpoint: "",
    failed: 0,
    failNext: (n) => {
      failing = n;
    },
    delayMs: 0,
    injected: {},
    requests: [],
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer(async (req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    const upload = req.method === "PUT" && (req.url ?? "").includes(".parquet");
    if (upload && state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
    const failNext = upload && failing > 0;
    const fault = failNext ? FAULTS.s3InternalError : state.inject?.(req);
    if (failNext) {
      failing--;
      state.failed++;
    } else if (fault) state.injected[fault.kind] = (state.injected[fault.kind] ?? 0) + 1;
    if (fault) {
      req.resume();
      req.on("end", () => {
        res.writeHead(fault.status, { "content-type": fault.contentType });
        res.end(fault.body);
      });
      return;
    }
    const fwd = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    fwd.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address() as { port: number };
  state.endpoint = `http://127.0.0.1:${addr.port}`;
  return state;
}

/** `perDay` runs on each UTC day from `firstDay`, half of them llm runs, posted through /runs/batch. */
export function runsOverDays(project: string, firstDay: string, days: number, perDay: number) {
  const runs: Record<string, unknown>[] = [];
  for (let d = 0; d < days; d++) {
    const base = Date.parse(`${firstDay}T00:00:00Z`) + d * 86_400_000;
    for (let i = 0; i < perDay; i++) {
      const start = base + Math.floor(((i + 0.5) * 86_400_000) / perDay);
      const llm = i % 2 === 0;
      runs.push({
        id: crypto.randomUUID(),
        name: llm ? "ChatModel" : "Chain",
        run_type: llm ? "llm" : "chain",
        session_name: project,
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 250).toISOString(),
        inputs: llm ? { messages: [{ role: "user", content: `hi ${d}/${i} — ünïcode` }] } : { q: i },
        outputs: llm
          ? {
              choices: [{ message: { role: "assistant", content: "hello" } }],
              usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
            }
          : { a: i },
        tags: i % 3 === 0 ? ["prod", `d${d}`] : [],
        extra: { metadata: { day: d } },
      });
    }
  }
  return runs;
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 150,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Downloads every object under a prefix into a fresh directory, keeping the key paths. */
export async function download(
  client: S3Client,
  bucket: string,
  prefix = "",
): Promise<{ dir: string; keys: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "export-files-"));
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix || undefined, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
      const path = join(dir, o.Key!);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await got.Body!.transformToByteArray());
      keys.push(o.Key!);
    }
    token = page.NextContinuationToken;
  } while (token);
  return { dir, keys };
}

/** Rows of a DuckDB query (values converted to JS). */
export async function duck(sql: string): Promise<Record<string, any>[]> {
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(sql);
    return reader.getRowObjectsJS() as Record<string, any>[];
  } finally {
    conn.closeSync?.();
  }
}

/** JSON calls to a platform started by the test itself (harness/platform.ts), with its bootstrap key. */
export function platformApi(p: { base: string; facts: LocalFacts }) {
  const headers = {
    "X-Api-Key": p.facts.api_key,
    "X-Tenant-Id": p.facts.tenant_id,
    "content-type": "application/json",
  };
  return async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${p.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as any };
  };
}

/**
 * Ingests runs, creates a bucket in the workspace's own S3 (`store`) and a destination on it (through `endpoint`),
 * and returns what an export needs.
 */
export async function exportSource(
  p: { base: string; facts: LocalFacts },
  opts: { project: string; firstDay: string; days: number; perDay: number; bucket: string; endpoint: string },
  store: CustomerS3,
) {
  const api = platformApi(p);
  const sent = runsOverDays(opts.project, opts.firstDay, opts.days, opts.perDay);
  for (let i = 0; i < sent.length; i += 100) {
    const r = await api("POST", "/api/v1/runs/batch", { post: sent.slice(i, i + 100) });
    if (r.status !== 202) throw new Error(`ingest failed: ${r.status}`);
  }
  const project = (await api("GET", `/api/v1/sessions?name=${opts.project}`)).json[0].id as string;
  await s3For(store).send(new CreateBucketCommand({ Bucket: opts.bucket }));
  const dest = await api("POST", "/api/v1/bulk-exports/destinations", {
    destination_type: "s3",
    display_name: opts.bucket,
    config: { bucket_name: opts.bucket, prefix: "x", endpoint_url: opts.endpoint },
    credentials: { access_key_id: store.s3.access_key_id, secret_access_key: store.s3.secret_access_key },
  });
  if (dest.status !== 200) throw new Error(`destination failed: ${JSON.stringify(dest.json)}`);
  return { api, sent, project, destination: dest.json.id as string };
}

export const FINAL_STATUSES = ["Completed", "Failed", "Cancelled", "TimedOut"];
