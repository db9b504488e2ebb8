import { createHash } from "node:crypto";
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { CREATE_ONLY, cancelCodes, transact } from "../../aws/ddb.ts";
import { HttpError, NotFound } from "../../errors.ts";
import { contains } from "../../json-contains.ts";
import { logger } from "../../log.ts";
import {
  AGENT_INDEX,
  agentKeys,
  CRONS_DUE,
  type CronRecord,
  crons,
  indexedAgentRecord,
  runs,
  type ThreadRecord,
  threads,
} from "../../records/agent.ts";
import { queryShards, shardKey } from "../../records/shard.ts";
import { isoNow } from "../../time.ts";
import { type AuthFilters, authConfigurable, authUser, matchesAuthFilters } from "../auth/scope.ts";
import { type AgentDeployment, agentDeployment } from "../deployment/deployment.ts";
import type { RuntimeHost } from "../hosting/runtime-host.ts";
import { graphFor } from "../runs/assistant.ts";
import { ACTIVE, cancelRun, newRunRecord, type RunCreate, threadRuns } from "../runs/runs.ts";
import { bindGraph, getThreadItem, newThreadRecord } from "../threads/threads.ts";
import { nextRunDate } from "./schedule.ts";
import type { CronCreate, CronPatch, CronSearch } from "./schemas.ts";

// Crons of the agent server. Two sides:
// - the API (in the deployment's runtime, like every agent route): cron records, scoped per deployment. A cron
//   with a next run sits in a sparse index (CRONS_DUE_PK, sorted by next_run_date).
// - the ticks (platform: the AgentCronTick task, every minute — an EventBridge Scheduler cron(* * * * ? *) in AWS,
//   a timer at each minute locally): due crons are read from the index and each due tick is fired by ONE
//   transaction that stores the run (and, stateless, its new thread) and moves the cron's next_run_date on,
//   conditioned on next_run_date still being the tick's time. So a tick fired twice (a retried invocation, two
//   overlapping sweeps, a restart mid-tick) creates one run; a tick whose write did not happen is still due and
//   fires at the next sweep. The run's id is derived from the cron id and the tick's time too. Then the
//   deployment's runtime is kicked to execute it, as the run sweeper does (a lost kick is the sweeper's pending run).

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
): Promise<Cron> {
  if (threadId !== null && !(await getThreadItem(d, threadId)))
    throw new NotFound(`Thread ${threadId} not found`);
  const rg = await graphFor(d, body.assistant_id);
  const now = isoNow();
  const cronId = crypto.randomUUID();
  const enabled = body.enabled ?? true;
  const next = enabled ? (nextRunDate(body.schedule, Date.now(), body.end_time) ?? null) : null;
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
    created_at: now,
    updated_at: now,
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
export async function patchCron(d: AgentDeployment, cronId: string, patch: CronPatch): Promise<Cron> {
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
        ? (nextRunDate(schedule, Date.now(), endTime) ?? null)
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
      updated_at: isoNow(),
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

export type TickOutcome = "fired" | "already-fired" | "skipped";

/**
 * Fires one tick of a cron: the tick due at `scheduledAt` (its next_run_date). Idempotent: the run is stored in
 * the same transaction that moves next_run_date on from `scheduledAt`, so a second call finds it moved.
 * `now` decides the next tick: missed ticks (an outage longer than a minute) collapse into this one.
 */
export async function fireTick(
  /** How the thread's runtime is asked to start the tick's run (the task's runtimeHost()). */
  host: Pick<RuntimeHost, "kick">,
  tenantId: string,
  deploymentId: string,
  cronId: string,
  scheduledAt: string,
  now = Date.now(),
): Promise<{ outcome: TickOutcome; run_id?: string; thread_id?: string }> {
  let d: AgentDeployment;
  try {
    d = await agentDeployment(tenantId, deploymentId);
  } catch (err) {
    // A deleted deployment's crons go with it (the deployment purge does not list them).
    if (err instanceof NotFound) {
      await crons.delete({ scope: `${tenantId}#${deploymentId}`, cron: cronId });
      logger.warn("cron of a deleted deployment removed", { cron_id: cronId, deployment_id: deploymentId });
      return { outcome: "skipped" };
    }
    throw err;
  }
  const cron = await crons.get({ scope: d.scope, cron: cronId }, true);
  if (!cron?.enabled || cron.next_run_date !== scheduledAt) return { outcome: "already-fired" };
  const tickMs = Date.parse(scheduledAt);
  const next = nextRunDate(cron.schedule, Math.max(tickMs, now - 60_000), cron.end_time) ?? null;
  const moveOn = (): TransactWriteItem => ({
    Update: crons.updateInput(
      { scope: d.scope, cron: cronId },
      {
        set: { next_run_date: next, ...dueIndex(d.scope, cronId, next) },
        when: { next_run_date: scheduledAt, enabled: true },
        remove: next ? undefined : ["AGENT1PK", "AGENT1SK"],
      },
    ),
  });
  const skip = async (why: string) => {
    logger.warn("cron tick skipped", { cron_id: cronId, scheduled_at: scheduledAt, reason: why });
    await transact([moveOn()]).catch((err) => {
      if (!cancelCodes(err)) throw err;
    });
    return { outcome: "skipped" as const };
  };
  if (cron.end_time && tickMs > Date.parse(cron.end_time)) return skip("past end_time");
  const body = cron.payload as RunCreate;
  let rg: Awaited<ReturnType<typeof graphFor>>;
  try {
    rg = await graphFor(d, cron.assistant_id);
  } catch (err) {
    if (err instanceof NotFound) return skip(err.message);
    throw err;
  }
  const stateless = cron.thread_id === null;
  const threadId = cron.thread_id ?? tickId(cronId, scheduledAt, "thread");
  const runId = tickId(cronId, scheduledAt, "run");
  const strategy = body.multitask_strategy ?? "enqueue";
  const at = isoNow();
  const run = newRunRecord(d, { threadId, runId, at, stateless, rg }, body, {
    // A tick's run has no client to disconnect; a stateless tick's thread goes as the cron says.
    on_disconnect: "continue",
    on_completion: stateless ? (cron.on_run_completed ?? "delete") : "keep",
    metadata: { cron_id: cronId },
    // The cron's creator (custom auth): the tick has no request of its own.
    runAs: cron.run_as,
  });
  const items: TransactWriteItem[] = [{ Put: runs.putInput(run, CREATE_ONLY) }];
  if (stateless) {
    const thread: ThreadRecord = {
      ...newThreadRecord(d, threadId, at, {
        graph_id: rg.graph_id,
        assistant_id: rg.assistant_id,
        cron_id: cronId,
      }),
      graph_id: rg.graph_id,
      queued: 1,
    };
    items.push({ Put: threads.putInput(thread, CREATE_ONLY) });
  } else {
    const thread = await getThreadItem(d, threadId);
    if (!thread) return skip(`thread ${threadId} not found`);
    if (strategy === "reject" && (thread.active_run || (thread.queued ?? 0) > 0))
      return skip("thread busy; multitask_strategy is reject");
    if (thread.graph_id !== rg.graph_id) await bindGraph(d, threadId, rg.graph_id, rg.assistant_id);
    items.push({ Update: threads.updateInput({ scope: d.scope, thread: threadId }, { add: { queued: 1 } }) });
  }
  items.push(moveOn());
  try {
    await transact(items);
  } catch (err) {
    const codes = cancelCodes(err);
    if (!codes) throw err;
    if (codes[2] === "ConditionalCheckFailed" || codes[0] === "ConditionalCheckFailed")
      return { outcome: "already-fired" };
    if (!stateless && codes[1] === "ConditionalCheckFailed") return skip(`thread ${threadId} not found`);
    throw err;
  }
  logger.info("cron tick fired", {
    cron_id: cronId,
    scheduled_at: scheduledAt,
    run_id: runId,
    thread_id: threadId,
  });
  // interrupt / rollback: the tick's run takes the thread, as a run created with that strategy does.
  if (!stateless && (strategy === "interrupt" || strategy === "rollback"))
    for (const other of await threadRuns(d, threadId, ACTIVE))
      if (other.run_id !== runId) await cancelRun(d, other, strategy);
  await host.kick(d.tenant_id, d.deployment_id, threadId);
  return { outcome: "fired", run_id: runId, thread_id: threadId };
}

export interface CronSweep {
  fired: number;
  skipped: number;
  /** The earliest next run seen (ms epoch), if any. */
  nextCheck?: number;
}

/** Fires every due tick of every cron (the AgentCronTick task's sweep). */
export async function sweepCrons(host: Pick<RuntimeHost, "kick">, now = Date.now()): Promise<CronSweep> {
  const out: CronSweep = { fired: 0, skipped: 0 };
  const due = await queryShards<Pick<CronRecord, "PK" | "SK" | "cron_id">>("main", CRONS_DUE, {
    IndexName: AGENT_INDEX,
    KeyConditionExpression: "AGENT1PK = :pk AND AGENT1SK <= :now",
    values: { ":now": `${new Date(now).toISOString()}~` },
  });
  for (const entry of due) {
    const ids = indexedAgentRecord(entry, "cron");
    if (!ids) continue;
    try {
      // The index holds keys and ids only, and lags the table: the cron's next run is read from its record, and
      // fireTick reads it again and fires only the tick still due.
      const key = { scope: `${ids.tenant}#${ids.deployment}`, cron: entry.cron_id };
      const item = await crons.get(key, true);
      for (let scheduled = item?.next_run_date ?? null, i = 0; scheduled && i < 5; i++) {
        if (Date.parse(scheduled) > now) break;
        const r = await fireTick(host, ids.tenant, ids.deployment, entry.cron_id, scheduled, now);
        if (r.outcome === "fired") out.fired++;
        else if (r.outcome === "skipped") out.skipped++;
        const after = await crons.get(key, true);
        scheduled = after?.enabled ? after.next_run_date : null;
      }
    } catch (err) {
      if (err instanceof HttpError)
        logger.warn("cron tick: deployment unavailable", { cron_id: entry.cron_id, error: err });
      else logger.error("cron tick failed", { cron_id: entry.cron_id, error: err });
    }
  }
  return out;
}
