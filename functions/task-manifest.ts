import { TASK_FUNCTION_PREFIX } from "../shared/aws/tasks.ts";
import { withLogContext } from "../shared/log.ts";
import { RUN_CLEANUP, type TtlDeleteFilter } from "../shared/retention/ttl-stream.ts";
import type { TableId } from "../shared/tables.ts";
import type { Group } from "./routes.ts";

// Non-HTTP functions: workflow tasks (ASL Task states name them as ${<name>FunctionArn}), async workers
// and schedule targets. One Lambda each in AWS; called in-process by the local cloud.
export interface TaskFunction {
  name: string;
  /** Module under functions/ (without .ts) exporting `handler(event)`. */
  handler: string;
  timeoutSeconds: number;
  memoryMb?: number;
  /** Its /tmp in AWS (512 MB by default, Lambda allows 512–10,240): for a task that unpacks what it handles. */
  ephemeralStorageMb?: number;
  /** Called when an execution of this state machine ends (an EventBridge rule in AWS; a hook locally). */
  onExecutionEnd?: string;
  /** API groups whose handlers invoke this task asynchronously (granted lambda:InvokeFunction on it). */
  invokedBy?: Group[];
  /** Run once when the local cloud starts (re-drives work an earlier process left unfinished). */
  onLocalStart?: boolean;
  /** With onLocalStart: how often AWS runs it (an EventBridge Scheduler rate; default every 5 minutes). */
  scheduleRate?: string;
  /**
   * Consumes what DynamoDB TTL deletes from a table (items with this sort key only): in AWS an event source
   * mapping on the table's stream, filtered to TTL REMOVEs; locally the TTL emulation (infra/local/ttl.ts).
   */
  ttlDeletes?: TtlDeleteFilter & { table: TableId };
  /**
   * A role of its own instead of the tasks' shared data role: it may only list and delete objects under these
   * prefixes of the platform bucket (and read the stream of ttlDeletes).
   */
  bucketCleanup?: string[];
  /**
   * Runs under the deploy role, the only role that may create, change or delete runtime functions and roles
   * (each role it creates carries the runtime boundary); no other task's role holds any of that.
   */
  deployRole?: boolean;
  /** Other tasks invoke it (a sweeper resuming a purge): the tasks' shared role may invoke it. */
  invokedByTasks?: boolean;
}

export const tasks: TaskFunction[] = [
  // Deleting a tracing project deletes its runs (invoked asynchronously by DELETE /api/v1/sessions/{id}).
  {
    name: "PurgeProjectRuns",
    handler: "tasks/purge-project-runs",
    timeoutSeconds: 900,
    invokedBy: ["platform", "control"],
  },
  // Deleting a deployment deletes its agent-server data (invoked asynchronously by DELETE /v2/deployments/{id}).
  {
    name: "PurgeDeploymentData",
    handler: "tasks/purge-deployment-data",
    timeoutSeconds: 900,
    invokedBy: ["control"],
    invokedByTasks: true,
  },
  // Deleting a deployment deletes its runtime function and role in AWS (invoked and awaited by the purge).
  {
    name: "RuntimeRemove",
    handler: "tasks/runtime-remove",
    timeoutSeconds: 120,
    invokedBy: ["control"],
    invokedByTasks: true,
    deployRole: true,
  },
  // Retention: DynamoDB TTL deletes runs past their tier's age; this deletes their S3 payloads (and the objects
  // of expired attachment records whose run is gone).
  {
    name: "RunRetentionCleanup",
    handler: "tasks/run-retention-cleanup",
    timeoutSeconds: 300,
    ttlDeletes: { table: "runs", ...RUN_CLEANUP },
    bucketCleanup: ["payloads/"],
  },
  // Agent server: runs execute in each deployment's own runtime (in AWS its function, see
  // shared/agent/runtime); the sweeper retries runs of dead runtimes and starts due delayed runs; runtimes send
  // their traces to AgentTraceIngest, which files them under their deployment's project.
  { name: "AgentTraceIngest", handler: "tasks/agent-trace-ingest", timeoutSeconds: 60 },
  {
    name: "AgentRunSweeper",
    handler: "tasks/agent-run-sweeper",
    timeoutSeconds: 300,
    onLocalStart: true,
    scheduleRate: "rate(1 minute)",
  },
  // Agent server crons: fires due ticks (shared/agent/crons/crons.ts) at the start of every minute (locally a timer).
  {
    name: "AgentCronTick",
    handler: "tasks/agent-cron-tick",
    timeoutSeconds: 60,
    onLocalStart: true,
    scheduleRate: "cron(* * * * ? *)",
  },
  // Bulk export (infra/state-machines/bulk-export.asl.json, the scheduler and the sweeper).
  { name: "ExportPlan", handler: "tasks/export-plan", timeoutSeconds: 60 },
  { name: "ExportPartition", handler: "tasks/export-partition", timeoutSeconds: 900, memoryMb: 1024 },
  { name: "ExportFinalize", handler: "tasks/export-finalize", timeoutSeconds: 120 },
  { name: "ExportSpawn", handler: "tasks/export-spawn", timeoutSeconds: 120 },
  { name: "ExportSweeper", handler: "tasks/export-sweeper", timeoutSeconds: 300, onLocalStart: true },
  {
    name: "ExportExecutionEnded",
    handler: "tasks/export-execution-ended",
    timeoutSeconds: 60,
    onExecutionEnd: "bulk-export",
  },
  // Revision pipeline (infra/state-machines/revision.asl.json; its Build state is a CodeBuild project, which
  // holds no platform credential: the tasks around it read and write the revision for it).
  { name: "RevisionPrepare", handler: "tasks/revision-prepare", timeoutSeconds: 60 },
  { name: "RevisionBuildStart", handler: "tasks/revision-build-start", timeoutSeconds: 60 },
  {
    name: "RevisionBuildFinish",
    handler: "tasks/revision-build-finish",
    timeoutSeconds: 300,
    memoryMb: 2048,
  },
  {
    name: "RevisionDeploy",
    handler: "tasks/revision-deploy",
    timeoutSeconds: 600,
    memoryMb: 1024,
    // One revision's code unpacked at a time (removed after its deploy): Lambda's 250 MB unzipped, with room.
    ephemeralStorageMb: 1024,
    deployRole: true,
  },
  { name: "RevisionFailed", handler: "tasks/revision-failed", timeoutSeconds: 60 },
  { name: "RevisionSweeper", handler: "tasks/revision-sweeper", timeoutSeconds: 300, onLocalStart: true },
  {
    name: "RevisionExecutionEnded",
    handler: "tasks/revision-execution-ended",
    timeoutSeconds: 60,
    onExecutionEnd: "revision",
  },
];

/** A task's handler as loaded by name: whatever its event type, it is called with what its caller passes. */
export type TaskHandler = (event: unknown) => Promise<unknown>;

/** The ids a task's input names (tenant_id, export_id, run_id, deployment_id, ...): what its log lines carry. */
function inputIds(input: unknown): Record<string, string | number> {
  const ids: Record<string, string | number> = {};
  if (!input || typeof input !== "object") return ids;
  for (const [k, v] of Object.entries(input))
    if (k.endsWith("_id") && (typeof v === "string" || typeof v === "number")) ids[k] = v;
  return ids;
}

/** What a "Step Functions Execution Status Change" event says of its execution: the ARN and its input's ids. */
function executionIds(event: unknown): Record<string, string | number> {
  const detail = (event as { detail?: { executionArn?: unknown; input?: unknown } } | null)?.detail;
  if (typeof detail?.executionArn !== "string") return {};
  let input: unknown;
  try {
    input = typeof detail.input === "string" ? JSON.parse(detail.input) : undefined;
  } catch {}
  return { execution_arn: detail.executionArn, ...inputIds(input) };
}

/**
 * A task's exported handler (the one named `name` in the manifest above): every line logged while it runs,
 * from any module, carries the task's name, the invocation's id (in AWS) and the ids its input names.
 */
export function defineTask<E = void, R = unknown>(
  name: string,
  fn: (event: E) => Promise<R> | R,
): ((event: E, context?: { awsRequestId?: string }) => Promise<R>) & { task: string } {
  const handler = async (event: E, context?: { awsRequestId?: string }) =>
    withLogContext(
      {
        task: name,
        ...(context?.awsRequestId ? { request_id: context.awsRequestId } : {}),
        ...inputIds(event),
        ...executionIds(event),
      },
      () => fn(event),
    );
  return Object.assign(handler, { task: name });
}

/** The function a name or ARN (arn:aws:lambda:…:function:<name>) refers to. */
export function taskByName(nameOrArn: string): TaskFunction | undefined {
  const name = nameOrArn.split(":function:").pop()!.split(":")[0].replace(TASK_FUNCTION_PREFIX, "");
  return tasks.find((t) => t.name === name || `${t.name}Function` === name);
}
