import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { InvokeCommand } from "@aws-sdk/client-lambda";
import { HeadObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { Client, RunTree } from "langsmith";
import { beforeAll, describe, expect, it } from "vitest";
import { newWorkspace, s3For } from "../harness/export.ts";
import { LocalTtl } from "../infra/local/ttl.ts";
import { dynamo, lambda } from "../shared/aws/clients.ts";
import { getItem, toItem } from "../shared/aws/ddb.ts";
import { config } from "../shared/config.ts";
import { buildMultipart } from "../shared/ingest/build-multipart.ts";
import { type TraceRunRecord, traceRunKeys } from "../shared/records/runs.ts";
import { runPayloadPrefix } from "../shared/retention/run-payloads.ts";
import { tableName } from "../shared/tables.ts";
import { call, facts } from "./helpers/cloud.ts";

// Retention: runs past their tier's age are deleted by DynamoDB TTL, with their S3 payloads. Locally TTL is the
// local cloud's emulation (infra/local/ttl.ts); a test runs a sweep now by invoking LocalTtlSweep.
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let client: Client;
const s3 = s3For(facts);
const DAY = 86_400;
const now = () => Math.floor(Date.now() / 1000);
/**
 * The emulation's own tests expire their items ten years ahead and sweep on a clock that far ahead: the local
 * cloud's timer sweep (and other files' invoked ones) never takes them first, and the test's sweep takes no one
 * else's.
 */
const AHEAD = 10 * 365 * DAY;
const ahead = () => now() + AHEAD;

const getRun = (id: string) => call("GET", `/api/v1/runs/${id}`, { headers: ws.headers });
const stored = (id: string) => getItem<TraceRunRecord>("runs", traceRunKeys.run(ws.tenant, id), true);
const payloadKeys = async (id: string) =>
  (
    await s3.send(
      new ListObjectsV2Command({ Bucket: facts.s3.bucket, Prefix: runPayloadPrefix(ws.tenant, id) }),
    )
  ).Contents?.map((o) => o.Key) ?? [];

/** Every item of a run's partition (the run, its patch record, …), keys only. */
const partition = async (id: string) =>
  (
    await dynamo().send(
      new QueryCommand({
        TableName: tableName("runs"),
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: toItem({ ":pk": traceRunKeys.run(ws.tenant, id).PK }),
        ConsistentRead: true,
        ProjectionExpression: "PK, SK",
      }),
    )
  ).Items ?? [];

/** Sets expires_at on every item of the run's partition, as the platform does with the run's tier. */
async function expireAt(id: string, seconds: number) {
  for (const Key of await partition(id))
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key,
        UpdateExpression: "SET expires_at = :e",
        ExpressionAttributeValues: toItem({ ":e": seconds }),
      }),
    );
}

/** What DynamoDB TTL would do by now: the local cloud's sweep, run at once. */
async function sweep(): Promise<{ deleted: number; delivered: number }> {
  const out = await lambda().send(new InvokeCommand({ FunctionName: "LocalTtlSweep", Payload: "{}" }));
  expect(out.FunctionError).toBeUndefined();
  return JSON.parse(Buffer.from(out.Payload!).toString());
}

/** A finished root run traced by the SDK, with an input big enough to be offloaded to S3 when `big`. */
async function trace(project: string, big: boolean): Promise<string> {
  const run = new RunTree({
    name: "Retained",
    run_type: "chain",
    inputs: { text: big ? "x".repeat(config.runs.fieldInlineBytes + 1024) : "small" },
    project_name: project,
    client,
    tracingEnabled: true,
  });
  await run.postRun();
  await run.end({ answer: "done" });
  await run.patchRun();
  await client.awaitPendingTraceBatches();
  await expect.poll(async () => (await getRun(run.id)).json?.status, { timeout: 15_000 }).toBe("success");
  return run.id;
}

beforeAll(async () => {
  ws = await newWorkspace();
  client = new Client({
    apiUrl: `${facts.base_url}/api/v1`,
    apiKey: ws.headers["X-Api-Key"],
    workspaceId: ws.tenant,
    autoBatchTracing: true,
  });
});

describe("run retention (DynamoDB TTL, emulated locally)", () => {
  it("an expired run is deleted with its S3 payloads; runs not yet expired are untouched", async () => {
    const project = `retention-${crypto.randomUUID().slice(0, 8)}`;
    const [expired, kept, small] = [
      await trace(project, true),
      await trace(project, true),
      await trace(project, false),
    ];

    // The big input went to S3 under the run's payload prefix.
    const ref = (await stored(expired))?.inputs_ref;
    expect(ref).toMatch(new RegExp(`^${runPayloadPrefix(ws.tenant, expired)}`));
    await s3.send(new HeadObjectCommand({ Bucket: facts.s3.bucket, Key: ref! }));
    expect(await payloadKeys(kept)).not.toEqual([]);

    // Fourteen days pass for one run: its expiry is moved into the past (what its tier's age does in time).
    // The others expire tomorrow.
    await expireAt(expired, now() - DAY);
    await expireAt(kept, now() + DAY);
    await expireAt(small, now() + DAY);
    const swept = await sweep();
    // The run item and its patch record go; the cleanup task hears of the run item.
    expect(swept.deleted).toBeGreaterThanOrEqual(2);
    expect(swept.delivered).toBeGreaterThanOrEqual(1);

    expect((await getRun(expired)).status).toBe(404);
    expect(await partition(expired)).toEqual([]);
    expect(await payloadKeys(expired)).toEqual([]);
    await expect(s3.send(new HeadObjectCommand({ Bucket: facts.s3.bucket, Key: ref! }))).rejects.toThrow();

    for (const id of [kept, small]) {
      const r = await getRun(id);
      expect(r.status).toBe(200);
      expect(r.json.inputs.text).toBeDefined();
    }
    expect((await getRun(kept)).json.inputs.text).toHaveLength(config.runs.fieldInlineBytes + 1024);
    expect(await payloadKeys(kept)).not.toEqual([]);
  });

  it("an attachment whose run never arrived goes with its record; a living run's attachment stays", async () => {
    // An attachment part for a run that is never posted (a client that crashed between the two).
    const orphan = crypto.randomUUID();
    const body = buildMultipart(
      [{ name: `attachment.${orphan}.notes`, data: "never traced", contentType: "text/plain" }],
      "b0undary",
    );
    const res = await fetch(`${facts.base_url}/api/v1/runs/multipart`, {
      method: "POST",
      headers: { ...ws.headers, "content-type": "multipart/form-data; boundary=b0undary" },
      body,
    });
    expect(res.status).toBe(202);
    expect(await payloadKeys(orphan)).toHaveLength(1);
    // A traced run with an attachment: only its attachment record expires (the run lives on).
    const run = new RunTree({
      name: "WithFile",
      run_type: "chain",
      inputs: {},
      project_name: `retention-files-${crypto.randomUUID().slice(0, 8)}`,
      client,
      tracingEnabled: true,
      attachments: { notes: ["text/plain", new TextEncoder().encode("kept")] },
    });
    await run.postRun();
    await run.end({});
    await run.patchRun();
    await client.awaitPendingTraceBatches();
    await expect.poll(async () => (await payloadKeys(run.id)).length, { timeout: 15_000 }).toBe(1);

    // The attachment records' long-lived age passes.
    await expireAt(orphan, now() - DAY);
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key: toItem({ PK: traceRunKeys.run(ws.tenant, run.id).PK, SK: "attachment#notes" }),
        UpdateExpression: "SET expires_at = :e",
        ExpressionAttributeValues: toItem({ ":e": now() - DAY }),
      }),
    );
    await sweep();
    expect(await partition(orphan)).toEqual([]);
    expect(await payloadKeys(orphan)).toEqual([]);
    expect(await stored(run.id)).toBeDefined();
    expect(await payloadKeys(run.id)).toHaveLength(1);
  });

  it("an expiry extended before the sweep keeps the run; a run without one never expires", async () => {
    const project = `retention-${crypto.randomUUID().slice(0, 8)}`;
    const [extended, forever] = [await trace(project, true), await trace(project, true)];
    await expireAt(extended, now() + 30 * DAY);
    await sweep();
    for (const id of [extended, forever]) {
      expect((await getRun(id)).status).toBe(200);
      expect(await payloadKeys(id)).not.toEqual([]);
    }
  });

  it("a user's delete of a run item is not retention: its payloads are the deleter's to remove", async () => {
    const project = `retention-${crypto.randomUUID().slice(0, 8)}`;
    const id = await trace(project, true);
    // Deleted by hand (as a purge does), with no expiry: no TTL delete, so the sweep sends nothing for it.
    await dynamo().send(
      new DeleteItemCommand({ TableName: tableName("runs"), Key: toItem(traceRunKeys.run(ws.tenant, id)) }),
    );
    await sweep();
    expect(await payloadKeys(id)).not.toEqual([]);
  });

  it("the cleanup task run twice on the same records is harmless (idempotent)", async () => {
    const project = `retention-${crypto.randomUUID().slice(0, 8)}`;
    const id = await trace(project, true);
    const record = {
      eventName: "REMOVE",
      userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" },
      dynamodb: { Keys: toItem(traceRunKeys.run(ws.tenant, id)), SequenceNumber: "1" },
    };
    for (let i = 0; i < 2; i++) {
      const out = await lambda().send(
        new InvokeCommand({
          FunctionName: "RunRetentionCleanup",
          Payload: JSON.stringify({ Records: [record] }),
        }),
      );
      expect(out.FunctionError).toBeUndefined();
      expect(JSON.parse(Buffer.from(out.Payload!).toString())).toEqual({
        batchItemFailures: [],
        runs: 1,
        attachments: 0,
      });
    }
    expect(await payloadKeys(id)).toEqual([]);
  });

  it("the local emulation delivers a batch its consumer failed again at the next sweep, from the failed record on", async () => {
    // A consumer of its own items (sort key of their own), through a LocalTtl of the test's: the cloud's own
    // sweep has no consumer for them.
    const sortKey = `retention-test-${crypto.randomUUID().slice(0, 8)}`;
    const consumer = {
      name: "Consumer",
      handler: "none",
      timeoutSeconds: 1,
      // Its items share one partition (a scan reads a partition's items together, in sort-key order), so one page
      // holds all three even when the shared table is large enough for the sweep to read it in several pages.
      ttlDeletes: { table: "runs" as const, sortKey, sortKeyPrefixes: [`${sortKey}-`] },
    };
    const calls: string[][] = [];
    const ttl = new LocalTtl(
      [consumer],
      async (_task, event) => {
        const records = (
          event as { Records: { dynamodb: { Keys: { SK: { S: string } }; SequenceNumber: string } }[] }
        ).Records;
        calls.push(records.map((r) => r.dynamodb.Keys.SK.S));
        // The first delivery fails from its second record on; later ones succeed.
        return calls.length === 1
          ? { body: { batchItemFailures: [{ itemIdentifier: records[1].dynamodb.SequenceNumber }] } }
          : { body: { batchItemFailures: [] } };
      },
      0,
      ahead,
    );
    const keys = ["a", "b", "c"].map((x) => ({ PK: `${ws.tenant}#${sortKey}`, SK: `${sortKey}-${x}` }));
    for (const k of keys)
      await dynamo().send(
        new PutItemCommand({
          TableName: tableName("runs"),
          Item: toItem({ ...k, expires_at: ahead() - DAY }),
        }),
      );
    const first = await ttl.sweep();
    expect(first.deleted).toBeGreaterThanOrEqual(3);
    expect(calls[0]).toEqual(keys.map((k) => k.SK));
    for (const k of keys)
      expect(
        (await dynamo().send(new GetItemCommand({ TableName: tableName("runs"), Key: toItem(k) }))).Item,
      ).toBe(undefined);
    await ttl.sweep();
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual(calls[0].slice(1));
    await ttl.sweep();
    expect(calls).toHaveLength(2);
  });

  it("the local emulation sweeps by itself every interval (LOCAL_TTL_SWEEP_MS), paced", async () => {
    const sortKey = `retention-timer-${crypto.randomUUID().slice(0, 8)}`;
    const consumer = {
      name: "Consumer",
      handler: "none",
      timeoutSeconds: 1,
      ttlDeletes: { table: "runs" as const, sortKey },
    };
    const heard: string[] = [];
    const ttl = new LocalTtl(
      [consumer],
      async (_task, event) => {
        for (const r of (event as { Records: { dynamodb: { Keys: { PK: { S: string } } } }[] }).Records)
          heard.push(r.dynamodb.Keys.PK.S);
        return { body: { batchItemFailures: [] } };
      },
      100,
      ahead,
    );
    const key = { PK: `${ws.tenant}#${sortKey}`, SK: sortKey };
    await dynamo().send(
      new PutItemCommand({ TableName: tableName("runs"), Item: toItem({ ...key, expires_at: ahead() - 1 }) }),
    );
    ttl.start();
    try {
      await expect.poll(() => heard, { timeout: 60_000, interval: 200 }).toEqual([key.PK]);
    } finally {
      ttl.stop();
    }
  });
});
