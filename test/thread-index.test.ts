import { DeleteItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { Client } from "langsmith";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { getItem, toItem } from "../shared/aws/ddb.ts";
import { traceRunKeys } from "../shared/records/runs.ts";
import { indexUnindexedThreads, recordThreads } from "../shared/runs/thread-index.ts";
import { tableName } from "../shared/tables.ts";
import { base, call } from "./helpers/cloud.ts";

// The thread index (GSI3 of the runs table): a project's threads by their last trace, each read from its own runs.
const tenant = newTenantId();
const project = `threads-${crypto.randomUUID().slice(0, 8)}`;
let client: Client;
let headers: Record<string, string>;
let projectId: string;
const HOUR = 3_600_000;
const now = Date.now();
const recent = `recent-${crypto.randomUUID()}`;
const old = `old-${crypto.randomUUID()}`;
const long = `long-${"x".repeat(400)}-${crypto.randomUUID()}`;
const runIds: Record<string, string[]> = { [recent]: [], [old]: [], [long]: [] };

async function trace(thread: string, start: number) {
  const id = crypto.randomUUID();
  runIds[thread]!.push(id);
  await client.createRun({
    id,
    name: "turn",
    run_type: "chain",
    project_name: project,
    start_time: start,
    end_time: start + 1000,
    inputs: { q: thread.slice(0, 10) },
    outputs: { a: "ok" },
    extra: { metadata: { thread_id: thread } },
  });
}

const query = (body: Record<string, unknown>) =>
  call("POST", "/api/v2/threads/query", { headers, body: { project_id: projectId, ...body } });

beforeAll(async () => {
  const key = newApiKey();
  await ensureTenant(tenant, "threads");
  await storeApiKey(key, [tenant]);
  headers = { "x-api-key": key };
  client = new Client({ apiUrl: `${base}/api/v1`, apiKey: key, autoBatchTracing: false });
  await trace(recent, now - 2 * HOUR);
  await trace(recent, now - HOUR);
  await trace(old, now - 72 * HOUR);
  await trace(long, now - 3 * HOUR);
  // Runs of no thread around them: none is read by a thread read.
  for (let i = 0; i < 5; i++)
    await client.createRun({
      name: "other",
      run_type: "chain",
      inputs: {},
      project_name: project,
      start_time: now - i * HOUR,
    });
  projectId = (await client.readProject({ projectName: project })).id;
});

describe("the thread index", () => {
  it("threads.query answers the threads active in the window, newest first, each with its own traces", async () => {
    const r = await query({});
    expect(r.status, r.text).toBe(200);
    expect(r.json.items.map((t: { thread_id: string }) => t.thread_id)).toEqual([recent, long]);
    expect(r.json.items[0]).toMatchObject({ count: 2, last_trace_id: runIds[recent]![1] });
    const wide = await query({ min_start_time: new Date(now - 96 * HOUR).toISOString() });
    expect(wide.json.items.map((t: { thread_id: string }) => t.thread_id)).toEqual([recent, long, old]);
  });

  it("pages through the cursor: every thread once, in the same order", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await query({
        min_start_time: new Date(now - 96 * HOUR).toISOString(),
        page_size: 1,
        cursor,
      });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.json.items.map((t: { thread_id: string }) => t.thread_id));
      cursor = r.json.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([recent, long, old]);
  });

  it("a thread id longer than a key may be is read by its digest, and answered as itself", async () => {
    const r = await call(
      "GET",
      `/api/v2/threads/${encodeURIComponent(long)}/traces?project_id=${projectId}`,
      {
        headers,
      },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.items.map((t: { trace_id: string }) => t.trace_id)).toEqual(runIds[long]);
  });

  it("runs stored before the index existed are put on it by the one-time backfill", async () => {
    const runs = tableName("runs");
    for (const id of runIds[old]!)
      await dynamo().send(
        new UpdateItemCommand({
          TableName: runs,
          Key: toItem(traceRunKeys.run(tenant, id)),
          UpdateExpression: "REMOVE GSI3PK, GSI3SK",
        }),
      );
    await dynamo().send(
      new DeleteItemCommand({ TableName: runs, Key: toItem(traceRunKeys.thread(tenant, projectId, old)) }),
    );
    const wide = { min_start_time: new Date(now - 96 * HOUR).toISOString() };
    const ids = async () => (await query(wide)).json.items.map((t: { thread_id: string }) => t.thread_id);
    expect(await ids()).toEqual([recent, long]);
    expect(await indexUnindexedThreads()).toBeGreaterThanOrEqual(1);
    expect(await ids()).toEqual([recent, long, old]);
    const r = await call("GET", `/api/v2/threads/${old}/traces?project_id=${projectId}`, { headers });
    expect(r.json.items.map((t: { trace_id: string }) => t.trace_id)).toEqual(runIds[old]);
  });

  it("a thread's marker takes one write per trace that moves its last end; an earlier trace then moves the first", async () => {
    const session = `markers-${crypto.randomUUID()}`;
    const thread = `t-${crypto.randomUUID()}`;
    let updates = 0;
    const name = "countMarkerUpdates";
    dynamo().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "UpdateItemCommand") updates++;
        return next(args);
      },
      { step: "initialize", name },
    );
    const at = (h: number) => new Date(now - h * HOUR).toISOString();
    const record = async (h: number) => {
      updates = 0;
      await recordThreads(tenant, [
        { session_id: session, thread_id: thread, start_time: at(h), is_root: true },
      ]);
      const m = await getItem<{ first_start_time: string; last_start_time: string }>(
        "runs",
        traceRunKeys.thread(tenant, session, thread),
        true,
      );
      return { updates, first: m?.first_start_time, last: m?.last_start_time };
    };
    try {
      expect(await record(5)).toEqual({ updates: 1, first: at(5), last: at(5) });
      expect(await record(2)).toEqual({ updates: 1, first: at(5), last: at(2) });
      // Not past the last end: that write is refused, and the first end moves.
      expect(await record(9)).toEqual({ updates: 2, first: at(9), last: at(2) });
      expect(await record(4)).toEqual({ updates: 2, first: at(9), last: at(2) });
    } finally {
      dynamo().middlewareStack.remove(name);
    }
  });
});
