import { TransactWriteItemsCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateScheduleCommand, DeleteScheduleCommand } from "@aws-sdk/client-scheduler";
import { dynamo, scheduler } from "../aws/clients.ts";
import { cancelCodes, deleteItem, queryPage, toItem } from "../aws/ddb.ts";
import { executionStatus, startNamedExecution, stopExecution } from "../aws/executions.ts";
import { taskArn } from "../aws/tasks.ts";
import { config } from "../config.ts";
import { ValidationFailed } from "../errors.ts";
import { logger } from "../log.ts";
import {
  activeExports,
  type ExportQueueItem,
  type ExportRecord,
  exportKeys as keys,
} from "../records/export.ts";
import { tableName } from "../tables.ts";
import { canonicalNow, canonicalTime } from "../time.ts";
import { finishOpenRuns, listExportRuns, recordFailure } from "./export-runs.ts";
import {
  childIdOf,
  FINAL,
  getExport,
  getExportRecord,
  putExport,
  setStatus,
  updateExportFields,
} from "./exports.ts";
import { exportDeadline, TIMEOUT_ERRORS } from "./workflow.ts";

// How exports move: a queue per workspace in front of a bounded set of running slots, one Step Functions
// execution per running export, finalization from the state machine (or from the execution's end event),
// cancellation, the sweeper that re-drives what a stopped process left behind, and scheduled spawning.
export const MACHINE = "bulk-export";

/** Starts queued exports of a workspace, oldest first, while running slots are free. */
export async function launchQueued(tenant: string): Promise<void> {
  for (;;) {
    const page = await queryPage<ExportQueueItem>("main", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": keys.queuePk(tenant) },
      Limit: 25,
      ConsistentRead: true,
    });
    if (!page.items.length) return;
    for (const q of page.items) {
      const exp = await getExportRecord(tenant, q.id);
      if (exp?.status !== "Created") {
        await deleteItem("main", { PK: q.PK, SK: q.SK });
        continue;
      }
      const outcome = await takeSlot(tenant, exp, q);
      if (outcome === "full") return;
      if (outcome === "gone") continue;
      await startExecution(tenant, (await getExportRecord(tenant, exp.id))!);
    }
  }
}

/** One transaction: a free slot, Created → Running, the queue entry gone. */
async function takeSlot(
  tenant: string,
  exp: ExportRecord,
  q: ExportQueueItem,
): Promise<"ok" | "full" | "gone"> {
  const TableName = tableName("main");
  const at = canonicalNow();
  try {
    await dynamo().send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName,
              Key: toItem(keys.slots(tenant)),
              UpdateExpression: "ADD running :id",
              ConditionExpression:
                "attribute_not_exists(running) OR size(running) < :limit OR contains(running, :one)",
              ExpressionAttributeValues: toItem({
                ":id": new Set([exp.id]),
                ":one": exp.id,
                ":limit": config.export.maxRunningPerWorkspace,
              }),
            },
          },
          {
            Update: {
              TableName,
              Key: toItem(keys.export(tenant, exp.id)),
              UpdateExpression:
                "SET #st = :running, updated_at = :at, started_at = if_not_exists(started_at, :at) ADD launches :one",
              ConditionExpression: "#st = :created",
              ExpressionAttributeNames: { "#st": "status" },
              ExpressionAttributeValues: toItem({
                ":running": "Running",
                ":created": "Created",
                ":at": at,
                ":one": 1,
              }),
            },
          },
          { Delete: { TableName, Key: toItem({ PK: q.PK, SK: q.SK }) } },
        ],
      }),
    );
    return "ok";
  } catch (err) {
    const codes = cancelCodes(err);
    if (codes?.[0] === "ConditionalCheckFailed") return "full";
    if (codes?.[1] === "ConditionalCheckFailed") {
      await deleteItem("main", { PK: q.PK, SK: q.SK });
      return "gone";
    }
    if (codes?.includes("TransactionConflict")) return "full"; // someone else is launching; they carry on
    throw err;
  }
}

/** A new execution for a running export (first launch, or a re-drive after the process stopped). */
export async function startExecution(tenant: string, exp: ExportRecord): Promise<void> {
  const name = `${exp.id}-${exp.launches ?? 1}`;
  const arn = await startNamedExecution(MACHINE, name, { tenant_id: tenant, export_id: exp.id });
  await updateExportFields(tenant, exp.id, { execution_arn: arn });
}

/** Frees the export's running slot and its sweeper marker, then starts what waits in the queue. */
export async function release(tenant: string, id: string): Promise<void> {
  await dynamo().send(
    new UpdateItemCommand({
      TableName: tableName("main"),
      Key: toItem(keys.slots(tenant)),
      UpdateExpression: "DELETE running :id",
      ExpressionAttributeValues: toItem({ ":id": new Set([id]) }),
    }),
  );
  await activeExports.delete({ tenant, id });
  await launchQueued(tenant);
}

export interface Failure {
  Error?: string;
  Cause?: string;
}

/** The end of an export: its status from its runs (or from the failure that stopped it). */
export async function finalize(tenant: string, id: string, failure?: Failure): Promise<string> {
  const exp = await getExport(tenant, id);
  if (FINAL.has(exp.status)) {
    await release(tenant, id);
    return exp.status;
  }
  const runs = await listExportRuns(tenant, id);
  let status: "Completed" | "Failed" | "TimedOut";
  // A run's ExportTimedOut reaches here as the Map Run's failure (a Distributed Map hides the child's error): the
  // deadline having passed is what says the export timed out.
  if (failure && (TIMEOUT_ERRORS.includes(failure.Error ?? "") || exportDeadline(exp) <= Date.now()))
    status = "TimedOut";
  else if (failure || runs.some((r) => r.status !== "Completed")) status = "Failed";
  else status = "Completed";
  if (status !== "Completed")
    await finishOpenRuns(tenant, id, status === "TimedOut" ? "TimedOut" : "Cancelled", "Failed");
  await setStatus(tenant, id, ["Running", "Created"], status);
  logger.info("bulk export finished", { tenant_id: tenant, export_id: id, status, error: failure?.Error });
  await release(tenant, id);
  return status;
}

/** PATCH {status: Cancelled}: stops the execution or the schedule; a cancelled export stays cancelled. */
export async function cancelExport(tenant: string, id: string): Promise<ExportRecord> {
  const exp = await getExport(tenant, id);
  if (exp.status === "Cancelled") return exp;
  if (FINAL.has(exp.status))
    throw new ValidationFailed([
      {
        loc: ["body", "status"],
        msg: `Bulk export is already ${exp.status} and cannot be cancelled`,
        type: "value_error",
      },
    ]);
  if (!(await setStatus(tenant, id, ["Created", "Running", "IntervalScheduled"], "Cancelled")))
    return cancelExport(tenant, id); // it moved meanwhile: decide again on its new state
  if (exp.status === "IntervalScheduled") {
    if (exp.schedule_name) await deleteSchedule(exp.schedule_name);
    return getExport(tenant, id);
  }
  if (exp.execution_arn)
    await stopExecution(exp.execution_arn, "Cancelled by the user").catch((err) =>
      logger.warn("stopping a cancelled export's execution failed", { export_id: id, error: err }),
    );
  await finishOpenRuns(tenant, id, "Cancelled");
  await deleteItem("main", keys.queue(tenant, exp));
  await release(tenant, id);
  return getExport(tenant, id);
}

/**
 * Re-drives unfinished work: a Running export whose execution is gone (the local process stopped) gets a
 * new execution that resumes from the runs' checkpoints — each interrupted run records the interruption as a
 * failed attempt; an execution that ended without finalizing is finalized; slots of finished exports are
 * freed; queues are drained. Runs at local start-up, and on a schedule in AWS.
 */
export async function sweep(): Promise<{ redriven: string[]; finalized: string[] }> {
  const redriven: string[] = [];
  const finalized: string[] = [];
  const tenants = new Set<string>();
  for await (const markers of activeExports.pages(keys.activePk)) {
    for (const marker of markers) {
      const tenant = marker.tenant_id;
      tenants.add(tenant);
      const exp = await getExportRecord(tenant, marker.id);
      if (!exp || FINAL.has(exp.status)) {
        if (exp) await release(tenant, exp.id);
        else await activeExports.delete({ tenant, id: marker.id });
        continue;
      }
      if (exp.status !== "Running") continue;
      const state = exp.execution_arn ? await executionStatus(exp.execution_arn) : { status: "MISSING" };
      if (state.status === "RUNNING") continue;
      if (state.status === "MISSING") {
        for (const run of await listExportRuns(tenant, exp.id))
          if (run.status === "Running")
            await recordFailure(
              tenant,
              run,
              "Interrupted: the export worker stopped; resumed from the last checkpoint",
              false,
            );
        await updateExportFields(tenant, exp.id, { launches: (exp.launches ?? 1) + 1 });
        await startExecution(tenant, (await getExportRecord(tenant, exp.id))!);
        redriven.push(exp.id);
      } else {
        await finalize(tenant, exp.id, { Error: state.status, Cause: state.cause });
        finalized.push(exp.id);
      }
    }
  }
  for (const tenant of tenants) await launchQueued(tenant);
  return { redriven, finalized };
}

// — scheduled exports —

const ms = (t: string) => Date.parse(t);
const iso = (n: number) => canonicalTime(n)!;

/**
 * Spawns every window of a scheduled export that is due (its end + the spawn delay has passed), in order,
 * then schedules itself for the next window. Child ids derive from the window, so a repeated call spawns
 * nothing twice.
 */
export async function spawnDue(tenant: string, parentId: string): Promise<string[]> {
  const spawned: string[] = [];
  for (;;) {
    const parent = await getExportRecord(tenant, parentId);
    if (parent?.status !== "IntervalScheduled") return spawned;
    const start = parent.next_window_start ?? parent.start_time;
    const end = iso(ms(start) + parent.interval_hours! * 3_600_000);
    const due = ms(end) + config.export.spawnDelaySeconds * 1000;
    if (due > Date.now()) {
      await scheduleSpawn(tenant, parent, end, due);
      break;
    }
    const child = await putExport(tenant, {
      id: childIdOf(parentId, start),
      bulk_export_destination_id: parent.bulk_export_destination_id,
      session_id: parent.session_id,
      start_time: start,
      end_time: end,
      filter: parent.filter,
      export_fields: parent.export_fields,
      format_version: parent.format_version,
      compression: parent.compression,
      // A window is a one-off export: the schedule is its parent's.
      interval_hours: null,
      source_bulk_export_id: parentId,
    });
    spawned.push(child.id);
    await updateExportFields(
      tenant,
      parentId,
      { next_window_start: end, updated_at: canonicalNow() },
      { next_window_start: start },
    );
  }
  await launchQueued(tenant);
  return spawned;
}

async function scheduleSpawn(tenant: string, parent: ExportRecord, windowEnd: string, due: number) {
  const name = `bulk-export-${parent.id}-${Math.floor(ms(windowEnd) / 1000)}`;
  if (parent.schedule_name === name) return;
  const at = new Date(Math.max(due, Date.now() + 1000)).toISOString().slice(0, 19);
  try {
    await scheduler().send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: config.wiring.schedulerGroup,
        ScheduleExpression: `at(${at})`,
        ScheduleExpressionTimezone: "UTC",
        FlexibleTimeWindow: { Mode: "OFF" },
        ActionAfterCompletion: "DELETE",
        Target: {
          Arn: taskArn("ExportSpawn"),
          RoleArn: config.wiring.schedulerRoleArn,
          Input: JSON.stringify({ tenant_id: tenant, export_id: parent.id }),
          RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 86_400 },
        },
      }),
    );
  } catch (err) {
    if (!isAwsError(err, "ConflictException")) throw err;
  }
  const previous = parent.schedule_name;
  await updateExportFields(tenant, parent.id, { schedule_name: name });
  if (previous && previous !== name) await deleteSchedule(previous);
}

async function deleteSchedule(name: string) {
  await scheduler()
    .send(new DeleteScheduleCommand({ Name: name, GroupName: config.wiring.schedulerGroup }))
    .catch((err: unknown) => {
      if (!isAwsError(err, "ResourceNotFoundException")) throw err;
    });
}

/** An SDK error of the given name (some clients set `code` instead). */
function isAwsError(err: unknown, name: string): boolean {
  const e = err as { name?: unknown; code?: unknown } | null | undefined;
  return e?.name === name || e?.code === name;
}
