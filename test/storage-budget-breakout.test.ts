import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { waitFor } from "../harness/export.ts";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import type { ProxyPrincipal } from "../infra/local/policy-proxy/handler.ts";
import { StorageBudget } from "../infra/local/policy-proxy/storage-budget.ts";
import { localStorageBudget, storageUsageFile, storedBytes } from "../infra/local/storage-budget.ts";
import { dynamo, s3 } from "../shared/aws/clients.ts";
import { config } from "../shared/config.ts";
import { runtimeKeyPrefixes } from "../shared/containment/runtime-policy.ts";
import { tableName } from "../shared/tables.ts";
import { auth, base, call } from "./helpers/cloud.ts";
import { runtimePrincipal, startRuntimeProxy } from "./helpers/runtime-proxy.ts";

// Issue 33, M3: a runtime can fill the host's disk. A graph signs with its own runtime's credentials (it runs in the
// signer's process) and writes into its own checkpoint prefix and its own table partitions, which its policy
// allows, as much as it likes. Each deployment's writes are charged to a storage budget of its own by the policy
// proxy — here the local Lambda service's budget (measured from s3rver and DynamoDB Local, kept in a file) with
// small limits: past it a runtime's writes are refused as the services refuse a quota (small ones past a reserve of
// 1/32 of it); another deployment's go on.
const KiB = 1024;
const MiB = 1024 * KiB;
const LIMIT = 2 * MiB;
const MAX_OBJECT = 1 * MiB;

const dir = mkdtempSync(join(tmpdir(), "storage-budget-"));
const usageFile = join(dir, "storage-usage.json");
const newBudget = () => localStorageBudget(usageFile, { limitBytes: LIMIT, maxObjectBytes: MAX_OBJECT });

interface Runtime {
  principal: ProxyPrincipal;
  blobs: string;
  checkpoints: string;
  proxy: Awaited<ReturnType<typeof startRuntimeProxy>>;
  s3: S3Client;
  ddb: DynamoDBClient;
}
const opened: Runtime[] = [];

/** A runtime of a new deployment, behind a proxy of its own charging `budget`, with its own clients. */
async function runtime(budget: StorageBudget, principal?: ProxyPrincipal): Promise<Runtime> {
  const p = principal ?? runtimePrincipal(`t-${crypto.randomUUID()}`, crypto.randomUUID());
  const { tenant_id, deployment_id } = p.deployment!;
  const prefixes = runtimeKeyPrefixes(tenant_id, deployment_id);
  const proxy = await startRuntimeProxy(p, { storage: budget });
  const credentials = { accessKeyId: p.accessKeyId, secretAccessKey: p.secretAccessKey };
  const common = { endpoint: proxy.endpoint, region: config.region, credentials, maxAttempts: 1 };
  const r: Runtime = {
    principal: p,
    blobs: prefixes.blobs,
    checkpoints: prefixes.checkpoints,
    proxy,
    s3: new S3Client({
      ...common,
      forcePathStyle: true,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    }),
    ddb: new DynamoDBClient(common),
  };
  opened.push(r);
  return r;
}

let budget: StorageBudget;
beforeAll(() => {
  budget = newBudget();
});
afterAll(async () => {
  for (const r of opened) {
    r.s3.destroy();
    r.ddb.destroy();
    await r.proxy.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The error of a call the proxy should refuse: its name and HTTP status (undefined when it went through). */
async function refusal(p: Promise<unknown>): Promise<{ name: string; status?: number } | undefined> {
  return p.then(
    () => undefined,
    (e: { name: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: e.name,
      status: e.$metadata?.httpStatusCode,
    }),
  );
}
const put = (r: Runtime, key: string, bytes: number) =>
  r.s3.send(
    new PutObjectCommand({
      Bucket: config.checkpointBucket,
      Key: `${r.blobs}${key}`,
      Body: Buffer.alloc(bytes, 97),
    }),
  );
const exists = (Key: string) =>
  s3()
    .send(new HeadObjectCommand({ Bucket: config.checkpointBucket, Key }))
    .then(
      () => true,
      () => false,
    );
const item = (r: Runtime, sk: string, bytes: number) => ({
  TableName: tableName("checkpoints"),
  Item: { PK: { S: `${r.checkpoints}T#thread` }, SK: { S: sk }, v: { B: new Uint8Array(bytes) } },
});

let hostile: Runtime;

describe("a runtime writing into its own prefix with its own credentials", () => {
  it("is refused past its deployment's budget (S3 403 QuotaExceeded), while another deployment's writes go on", async () => {
    hostile = await runtime(budget);
    const other = await runtime(budget);
    const outcomes: (string | undefined)[] = [];
    for (let i = 0; i < 8; i++) outcomes.push((await refusal(put(hostile, `fill-${i}`, 512 * KiB)))?.name);
    // 4 × 512 KiB fill the budget; every later one is refused.
    expect(outcomes).toEqual([undefined, undefined, undefined, undefined, ...Array(4).fill("QuotaExceeded")]);
    expect(await exists(`${hostile.blobs}fill-4`)).toBe(false);
    // Small writes (a run's status, its error) have a reserve of 1/32 past the budget: used up, they are refused.
    let small = 0;
    while ((await refusal(put(hostile, `small-${small}`, 4 * KiB))) === undefined && small < 100) small++;
    expect(small).toBe(Math.floor(LIMIT / 32 / (4 * KiB)));
    expect((await refusal(put(hostile, "one-more", 1)))?.status).toBe(403);
    expect(await storedBytes(hostile.principal.deployment!)).toBeLessThanOrEqual(LIMIT + LIMIT / 32);
    // Another deployment's runtime, on the same budgets, writes as before.
    expect(await refusal(put(other, "own", 512 * KiB))).toBeUndefined();
    expect(await refusal(other.ddb.send(new PutItemCommand(item(other, "C#x", 100 * KiB))))).toBeUndefined();
  });

  it("its DynamoDB writes are refused too once its budget is used (ItemCollectionSizeLimitExceededException), nothing written", async () => {
    const err = await refusal(hostile.ddb.send(new PutItemCommand(item(hostile, "C#big", 100 * KiB))));
    expect(err?.name).toBe("ItemCollectionSizeLimitExceededException");
    expect(err?.status).toBe(400);
    const got = await dynamo().send(
      new GetItemCommand({
        TableName: tableName("checkpoints"),
        Key: { PK: { S: `${hostile.checkpoints}T#thread` }, SK: { S: "C#big" } },
      }),
    );
    expect(got.Item).toBeUndefined();
  });

  it("the count survives a restart: a new budget over the same file and data refuses it still", async () => {
    budget.flush();
    const restarted = await runtime(newBudget(), hostile.principal);
    expect((await refusal(put(restarted, "after-restart", 64 * KiB)))?.name).toBe("QuotaExceeded");
    expect(await exists(`${hostile.blobs}after-restart`)).toBe(false);
  });

  it("a copy of its own object is charged the source's size: copies past the budget are refused, not stored", async () => {
    const r = await runtime(budget);
    await put(r, "source", 900 * KiB);
    const copy = (to: string) =>
      r.s3.send(
        new CopyObjectCommand({
          Bucket: config.checkpointBucket,
          Key: `${r.blobs}${to}`,
          CopySource: `${config.checkpointBucket}/${`${r.blobs}source`.split("/").map(encodeURIComponent).join("/")}`,
        }),
      );
    expect(await refusal(copy("copy-1"))).toBeUndefined();
    expect((await refusal(copy("copy-2")))?.name).toBe("QuotaExceeded");
    expect(await exists(`${r.blobs}copy-2`)).toBe(false);
  });
});

// secreview4: a measurement is a scan of both whole tables (every workspace's items), which any runtime at its budget
// asks for with its next write. One workspace's deployments each at its budget (or charged there by upper bounds,
// `SET b = a` a whole item) had a full scan every 30 s each, in parallel: a share of DynamoDB Local and of the
// platform's process that grows with the platform's data, taken from every workspace. Now measurements run one at a
// time, and a workspace gets at most one per interval between all its deployments. (On the code before the fix: 20
// measurements, up to 20 at once.)
describe("the measurements a workspace's runtimes ask for", () => {
  it("twenty deployments of one workspace at their budgets get one between them; another workspace's comes after, never beside", async () => {
    let running = 0;
    let most = 0;
    const measured: string[] = [];
    const paced = new StorageBudget({
      limitBytes: 64 * KiB,
      maxObjectBytes: 64 * KiB,
      remeasureAfterMs: 60_000,
      objectSize: async () => undefined,
      measure: async (scope) => {
        measured.push(scope.deployment_id);
        most = Math.max(most, ++running);
        try {
          return await storedBytes(scope);
        } finally {
          running--;
        }
      },
    });
    const tenant = `t-${crypto.randomUUID()}`;
    const own = await Promise.all(
      Array.from({ length: 20 }, () => runtime(paced, runtimePrincipal(tenant, crypto.randomUUID()))),
    );
    const other = await runtime(paced);
    // Each counted at its budget (its charges are upper bounds): its next write asks for a measurement.
    for (const r of [...own, other]) await paced.charge(r.principal.deployment!, 64 * KiB);
    const outcomes = await Promise.all([...own, other].map((r) => refusal(put(r, "past", 8 * KiB))));
    expect(measured.length).toBe(2);
    expect(most).toBe(1);
    // The measured deployment (nothing stored) and the other workspace's write; the rest wait for the interval.
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(2);
    expect(outcomes.at(-1)).toBeUndefined();
    expect(outcomes.filter((o) => o?.name === "QuotaExceeded")).toHaveLength(19);
  });
});

describe("one object of a runtime", () => {
  it("past AGENT_MAX_OBJECT_BYTES is refused (400 EntityTooLarge): a PUT, or a multipart upload's parts together", async () => {
    const r = await runtime(budget);
    const err = await refusal(put(r, "too-big", MAX_OBJECT + 1));
    expect(err).toEqual({ name: "EntityTooLarge", status: 400 });
    expect(await exists(`${r.blobs}too-big`)).toBe(false);
    const Key = `${r.blobs}multipart`;
    const { UploadId } = await r.s3.send(
      new CreateMultipartUploadCommand({ Bucket: config.checkpointBucket, Key }),
    );
    const part = (PartNumber: number) =>
      r.s3.send(
        new UploadPartCommand({
          Bucket: config.checkpointBucket,
          Key,
          UploadId,
          PartNumber,
          Body: Buffer.alloc(600 * KiB, 98),
        }),
      );
    expect(await refusal(part(1))).toBeUndefined();
    expect((await refusal(part(2)))?.name).toBe("EntityTooLarge");
  });
});

describe("a deployment's runtime on the local cloud", () => {
  it("has its writes charged to its deployment's budget by its own policy proxy, the count kept in DATA_DIR", async () => {
    const repo = gitRepo(graphRepoFiles(["a", "b"]));
    try {
      const { deploymentId } = await deployRepo(repo.dir, "budgeted", call, auth);
      const client = new Client({ apiUrl: `${base}/agents/${deploymentId}`, apiKey: auth["X-Api-Key"] });
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { text: "x" } });
      const used = await waitFor(
        "the deployment's usage to be kept",
        async () => {
          const text = (() => {
            try {
              return readFileSync(storageUsageFile(inject("dataDir")), "utf8");
            } catch {
              return "{}";
            }
          })();
          const bytes = (JSON.parse(text) as { deployments?: Record<string, number> }).deployments?.[
            deploymentId
          ];
          return bytes && bytes > 0 ? bytes : undefined;
        },
        20_000,
        200,
      );
      expect(used).toBeGreaterThan(0);
    } finally {
      repo.remove();
    }
  }, 300_000);
});
