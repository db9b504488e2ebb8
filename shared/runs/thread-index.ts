import { type AttributeValue, ScanCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { dynamo } from "../aws/clients.ts";
import { conditionalUpdate, fromItem, isConditionFailure, toItem } from "../aws/ddb.ts";
import { threadKey, traceRunKeys } from "../records/runs.ts";
import { tableName } from "../tables.ts";
import { recordExpiry } from "./tiers.ts";

// The thread index (GSI3 of the runs table): a run with a thread id carries the keys of its thread's partition,
// and each thread of a project has a marker item holding its first and last trace's start, on the project's
// partition of the same index sorted by the last. So a thread's reads cost its runs, and a project's thread list
// costs its threads — not the project's runs.

/** The index keys of a run with a thread id (none without one: the index is sparse). */
export function threadIndexKeys(run: {
  tenant_id: string;
  session_id: string;
  thread_id?: string | null;
  start_time: string;
  id: string;
}) {
  return run.thread_id
    ? traceRunKeys.threadRuns(run.tenant_id, run.session_id, run.thread_id, run.start_time, run.id)
    : {};
}

interface ThreadRun {
  session_id: string;
  thread_id?: string | null;
  start_time: string;
  is_root: boolean;
}

/** Widens the markers of the threads whose traces (root runs) these are: first and last start, created if new. */
export async function recordThreads(tenant: string, runs: readonly ThreadRun[]): Promise<void> {
  const spans = new Map<string, { session: string; thread: string; first: string; last: string }>();
  for (const r of runs) {
    if (!r.is_root || !r.thread_id) continue;
    const k = `${r.session_id}\n${r.thread_id}`;
    const s = spans.get(k) ?? {
      session: r.session_id,
      thread: r.thread_id,
      first: r.start_time,
      last: r.start_time,
    };
    if (r.start_time < s.first) s.first = r.start_time;
    if (r.start_time > s.last) s.last = r.start_time;
    spans.set(k, s);
  }
  await Promise.all([...spans.values()].map((s) => widenSpan(tenant, s)));
}

/**
 * Widens a marker to a span. A span of one start (a thread's trace, as a run ends) is one write when it moves
 * the last end: a new marker gets both ends from it, and an existing one's first end lies before its old last.
 */
async function widenSpan(
  tenant: string,
  s: { session: string; thread: string; first: string; last: string },
): Promise<void> {
  if (s.first === s.last) {
    if (await widen(tenant, s.session, s.thread, "last_start_time", s.last)) return;
    await widen(tenant, s.session, s.thread, "first_start_time", s.first);
    return;
  }
  await Promise.all([
    widen(tenant, s.session, s.thread, "last_start_time", s.last),
    widen(tenant, s.session, s.thread, "first_start_time", s.first),
  ]);
}

/**
 * Moves one end of a thread's span out to `time` when it lies beyond (a conditional write: no read first).
 * Answers whether it moved (false: the marker reaches as far already).
 */
async function widen(
  tenant: string,
  session: string,
  thread: string,
  end: "first_start_time" | "last_start_time",
  time: string,
): Promise<boolean> {
  const later = end === "last_start_time";
  const sets = [
    "#end = :t",
    "thread_id = :thread",
    "session_id = :session",
    "GSI3PK = :gsi",
    "expires_at = :exp",
    // The other end starts where this one does when the marker is new.
    later
      ? "first_start_time = if_not_exists(first_start_time, :t)"
      : "last_start_time = if_not_exists(last_start_time, :t)",
    ...(later ? ["GSI3SK = :sk"] : ["GSI3SK = if_not_exists(GSI3SK, :sk)"]),
  ];
  try {
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key: toItem(traceRunKeys.thread(tenant, session, thread)),
        UpdateExpression: `SET ${sets.join(", ")}`,
        ConditionExpression: `attribute_not_exists(#end) OR #end ${later ? "<" : ">"} :t`,
        ExpressionAttributeNames: { "#end": end },
        ExpressionAttributeValues: toItem({
          ":t": time,
          ":thread": thread,
          ":session": session,
          ":gsi": traceRunKeys.projectThreads(tenant, session),
          ":sk": `${time}#${threadKey(thread)}`,
          ":exp": recordExpiry(),
        }),
      }),
    );
    return true;
  } catch (err) {
    // The marker already reaches as far: nothing to do.
    if (!isConditionFailure(err)) throw err;
    return false;
  }
}

/**
 * Puts runs stored before the thread index on it: each run item with a thread id and no index keys gets them, and
 * its thread's marker is widened to it. Answers how many runs it indexed. Idempotent; a run written meanwhile by
 * ingestion is left as that write made it (the update is conditional on the keys still being absent).
 */
export async function indexUnindexedThreads(): Promise<number> {
  let done = 0;
  let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName: tableName("runs"),
        FilterExpression: "SK = :run AND attribute_exists(thread_id) AND attribute_not_exists(GSI3PK)",
        ProjectionExpression: "PK, SK, tenant_id, session_id, thread_id, start_time, id, is_root",
        ExpressionAttributeValues: { ":run": { S: "run" } },
        ExclusiveStartKey,
      }),
    );
    for (const raw of page.Items ?? []) {
      const run = fromItem<IndexedRun>(raw);
      if (typeof run.thread_id !== "string" || !run.thread_id) continue;
      if (
        !(await conditionalUpdate("runs", traceRunKeys.run(run.tenant_id, run.id), {
          set: threadIndexKeys(run),
          absent: ["GSI3PK"],
        }))
      )
        continue;
      await recordThreads(run.tenant_id, [run]);
      done++;
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return done;
}

interface IndexedRun extends ThreadRun {
  tenant_id: string;
  id: string;
}
