import { createHash } from "node:crypto";
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { CREATE_ONLY } from "../../aws/ddb.ts";
import { NotFound } from "../../errors.ts";
import { contains } from "../../json-contains.ts";
import {
  AGENT_INDEX,
  agentKeys,
  CRONS_DUE,
  type CronRecord,
  crons,
  indexedAgentRecord,
} from "../../records/agent.ts";
import { INDEX_BOUNDS, withinBound } from "../../records/index-bound.ts";
import { queryShards, shardKey } from "../../records/shard.ts";
import { isoNow } from "../../time.ts";
import { type AuthFilters, authConfigurable, authUser, matchesAuthFilters } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { graphFor } from "../runs/assistant.ts";
import { getThreadItem } from "../threads/threads.ts";
import { nextRunDate } from "./schedule.ts";
import type { CronCreate, CronPatch, CronSearch } from "./schemas.ts";

// Crons of the agent server. Two sides:
// - the API (in the deployment's runtime, like every agent route): cron records, scoped per deployment. A cron
//   with a next run sits in a sparse index (CRONS_DUE_PK, sorted by next_run_date).
// - the ticks (platform: the AgentCronTick task, every minute — an EventBridge Scheduler cron(* * * * ? *) in AWS,
//   a timer at each minute locally) are operations of the platform's agent server (ops/crons.ts `tick`, `sweep`):
//   due crons are read from the index here (`dueCrons`), and each due tick creates its run through `createRun`
//   with an id derived here from the cron id and the tick's time (`tickId`) and the cron's move-on (`cronMoveOn`)
//   as a write that holds with the run's, so a tick fired twice creates one run.

/** A cron as the API shows it. */
export type Cron = Omit<CronRecord, "PK" | "SK" | "AGENT1PK" | "AGENT1SK" | "run_as">;

export function toCron(r: CronRecord): Cron {
  const { PK: _pk, SK: _sk, AGENT1PK: _g, AGENT1SK: _s, run_as: _u, ...cron } = r;
  return cron;
}

/** The due-index attributes of a cron with this next run (none: no next run). */
const dueIndex = (scope: string, cronId: string, next: string | null) =>
  next ? { AGENT1PK: shardKey(CRONS_DUE, cronId), AGENT1SK: `${next}#${scope}#${cronId}` } : {};

const PAYLOAD_OMIT = ["schedule", "timezone", "end_time", "enabled", "on_run_completed"] as const;

export async function createCron(
  d: AgentDeployment,
  threadId: string | null,
  body: CronCreate,
  /** Now (ms): the cron's first run is the schedule's next after it. */
  now: number,
): Promise<Cron> {
  if (threadId !== null && !(await getThreadItem(d, threadId)))
    throw new NotFound(`Thread ${threadId} not found`);
  const rg = await graphFor(d, body.assistant_id);
  const at = new Date(now).toISOString();
  const cronId = crypto.randomUUID();
  const enabled = body.enabled ?? true;
  const next = enabled ? (nextRunDate(body.schedule, now, body.end_time) ?? null) : null;
  const payload: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body))
    if (v !== undefined && !(PAYLOAD_OMIT as readonly string[]).includes(k)) payload[k] = v;
  const record: CronRecord = {
    ...crons.key({ scope: d.scope, cron: cronId }),
    ...dueIndex(d.scope, cronId, next),
    cron_id: cronId,
    assistant_id: rg.assistant_id,
    thread_id: threadId,
    schedule: body.schedule,
    timezone: body.timezone ?? null,
    end_time: body.end_time ?? null,
    payload,
    metadata: body.metadata ?? {},
    on_run_completed: threadId === null ? (body.on_run_completed ?? "delete") : null,
    enabled,
    // Ticks run as the user who made the cron (custom auth), as the reference's crons do.
    user_id: authUser()?.identity ?? null,
    ...(authUser() ? { run_as: authConfigurable() } : {}),
    next_run_date: next,
    created_at: at,
    updated_at: at,
  };
  await crons.put(record, CREATE_ONLY);
  return toCron(record);
}

async function cronItem(d: AgentDeployment, cronId: string): Promise<CronRecord> {
  const item = await crons.get({ scope: d.scope, cron: cronId }, true);
  if (!item) throw new NotFound(`Cron ${cronId} not found`);
  return item;
}

const PAYLOAD_FIELDS = [
  "input",
  "config",
  "context",
  "webhook",
  "interrupt_before",
  "interrupt_after",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
  "durability",
] as const;

/** Applies a patch; the write holds only while the cron's next run is the one read (a tick may move it on). */
export async function patchCron(
  d: AgentDeployment,
  cronId: string,
  patch: CronPatch,
  /** Now (ms): a changed schedule's next run is the next after it. */
  now: number,
): Promise<Cron> {
  for (let attempt = 0; ; attempt++) {
    const old = await cronItem(d, cronId);
    const payload = { ...old.payload };
    for (const k of PAYLOAD_FIELDS) if (patch[k] !== undefined) payload[k] = patch[k];
    if (patch.metadata) payload.metadata = { ...(payload.metadata as object), ...patch.metadata };
    const schedule = patch.schedule ?? old.schedule;
    const endTime = patch.end_time === undefined ? old.end_time : patch.end_time;
    const enabled = patch.enabled ?? old.enabled;
    const timing = patch.schedule !== undefined || patch.end_time !== undefined || enabled !== old.enabled;
    const next = !enabled
      ? null
      : timing || !old.next_run_date
        ? (nextRunDate(schedule, now, endTime) ?? null)
        : old.next_run_date;
    const { AGENT1PK: _g, AGENT1SK: _s, ...rest } = old;
    const record: CronRecord = {
      ...rest,
      ...dueIndex(d.scope, cronId, next),
      schedule,
      timezone: patch.timezone ?? old.timezone,
      end_time: endTime,
      enabled,
      payload,
      metadata: patch.metadata ? { ...old.metadata, ...patch.metadata } : old.metadata,
      on_run_completed: old.thread_id === null ? (patch.on_run_completed ?? old.on_run_completed) : null,
      next_run_date: next,
      updated_at: new Date(now).toISOString(),
    };
    try {
      await crons.put(record, {
        ConditionExpression: "attribute_exists(PK) AND next_run_date = :next",
        ExpressionAttributeValues: {
          ":next": old.next_run_date === null ? { NULL: true } : { S: old.next_run_date },
        },
      });
      return toCron(record);
    } catch (err) {
      if ((err as Error)?.name !== "ConditionalCheckFailedException" || attempt >= 4) throw err;
    }
  }
}

/** Deletes the crons of a thread (with the thread, as on the reference server). */
export async function deleteThreadCrons(d: AgentDeployment, threadId: string): Promise<void> {
  const items = await crons.list(agentKeys.cronsPk(d.scope), { consistent: true });
  await Promise.all(
    items
      .filter((c) => c.thread_id === threadId)
      .map((c) => crons.delete({ scope: d.scope, cron: c.cron_id })),
  );
}

export async function deleteCron(d: AgentDeployment, cronId: string): Promise<void> {
  await cronItem(d, cronId);
  await crons.delete({ scope: d.scope, cron: cronId });
}

function filtered(
  items: CronRecord[],
  q: Pick<CronSearch, "assistant_id" | "thread_id" | "metadata"> & {
    enabled?: boolean | null;
    /** Custom auth's filters on metadata (auth-scope.ts): only the crons the user may see. */
    auth?: AuthFilters;
  },
) {
  return items.filter(
    (c) =>
      (!q.assistant_id || c.assistant_id === q.assistant_id) &&
      (!q.thread_id || c.thread_id === q.thread_id) &&
      (q.enabled === undefined || q.enabled === null || c.enabled === q.enabled) &&
      (!q.metadata || contains(c.metadata, q.metadata)) &&
      matchesAuthFilters(c.metadata, q.auth),
  );
}

export async function searchCrons(
  d: AgentDeployment,
  q: CronSearch & { auth?: AuthFilters },
): Promise<Record<string, unknown>[]> {
  const items = filtered(await crons.list(agentKeys.cronsPk(d.scope), { consistent: true }), q);
  const by = q.sort_by ?? "created_at";
  const dir = (q.sort_order ?? "desc") === "asc" ? 1 : -1;
  items.sort((a, b) => {
    const x = String(a[by] ?? "");
    const y = String(b[by] ?? "");
    return (x < y ? -1 : x > y ? 1 : a.cron_id < b.cron_id ? -1 : 1) * dir;
  });
  const page = items.slice(q.offset, q.offset + q.limit).map(toCron);
  if (!q.select?.length) return page;
  const now = isoNow();
  return page.map((c) =>
    Object.fromEntries(q.select!.map((f) => [f, f === "now" ? now : (c as Record<string, unknown>)[f]])),
  );
}

export async function countCrons(
  d: AgentDeployment,
  q: Pick<CronSearch, "assistant_id" | "thread_id" | "metadata"> & { auth?: AuthFilters },
) {
  return filtered(await crons.list(agentKeys.cronsPk(d.scope), { consistent: true }), q).length;
}

// — ticks (platform) —

/** A deterministic UUID (v7 layout: the tick's time first, so a thread's runs still sort by creation). */
export function tickId(cronId: string, scheduledAt: string, kind: "run" | "thread"): string {
  const ms = Date.parse(scheduledAt);
  const h = createHash("sha256").update(`${kind}:${cronId}:${scheduledAt}`).digest();
  const b = Buffer.alloc(16);
  b.writeUIntBE(ms, 0, 6);
  h.copy(b, 6, 0, 10);
  b[6] = 0x70 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A tick's move-on: the cron's next run becomes `next` (none: it leaves the due index), held only while its next
 * run is still the tick's (`scheduledAt`) and it is enabled — so a tick fired twice moves it on once.
 */
export function cronMoveOn(
  d: AgentDeployment,
  cronId: string,
  scheduledAt: string,
  next: string | null,
): TransactWriteItem {
  return {
    Update: crons.updateInput(
      { scope: d.scope, cron: cronId },
      {
        set: { next_run_date: next, ...dueIndex(d.scope, cronId, next) },
        when: { next_run_date: scheduledAt, enabled: true },
        remove: next ? undefined : ["AGENT1PK", "AGENT1SK"],
      },
    ),
  };
}

/** The crons due by `now` (ms), as the due index lists them (keys and ids only; it lags the table). */
export async function dueCrons(
  now: number,
): Promise<{ tenant: string; deployment: string; cronId: string }[]> {
  const all = await queryShards<Pick<CronRecord, "PK" | "SK" | "cron_id" | "AGENT1PK">>("main", CRONS_DUE, {
    IndexName: AGENT_INDEX,
    KeyConditionExpression: "AGENT1PK = :pk AND AGENT1SK <= :now",
    values: { ":now": `${new Date(now).toISOString()}~` },
  });
  // At most AGENT_MAX_SWEPT_ENTRIES per deployment are acted on; the rest leave the index (records/index-bound.ts).
  const due = await withinBound(all, INDEX_BOUNDS.dueCrons());
  const out: { tenant: string; deployment: string; cronId: string }[] = [];
  for (const entry of due) {
    const ids = indexedAgentRecord(entry, "cron");
    if (ids) out.push({ ...ids, cronId: entry.cron_id });
  }
  return out;
}
