import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Group, routes } from "../../functions/routes.ts";
import { tasks as manifestTasks, type TaskFunction } from "../../functions/task-manifest.ts";
import { MACHINE as REVISION_MACHINE } from "../../shared/control/pipeline.ts";
import { MACHINE as EXPORT_MACHINE } from "../../shared/export/lifecycle.ts";
import { TABLES, type TableId } from "../../shared/tables.ts";
import { BUILD_SYNC_ACTIONS } from "../build/project.ts";

// The platform functions' roles as data: what each may do, named by logical resource. The CDK app renders them
// with its tokens (infra/stacks/role-policies.ts), the local cloud with its own ARNs (infra/local/platform-roles.ts); no synth.

/** A resource by what it is; render.ts turns it into an ARN. */
export type Resource =
  | { table: TableId; index?: string }
  | { tableStream: TableId }
  | { bucket: "platform" | "artifacts"; objects?: string }
  | { key: "data" | "secrets" }
  | { stateMachine: string }
  | { executions: string }
  | { schedules: string }
  /** A task function by its name in the task manifest. */
  | { task: string }
  /** Every deployment's runtime function (agent-rt-*), or their versions and aliases. */
  | { runtimeFunctions: true; versions?: boolean }
  /** Runtime roles (under /agent-runtime/); `byName`: the path-less ARN IAM checks GetRole of a missing role against. */
  | { runtimeRoles: true; byName?: boolean }
  | { runtimeLogGroups: true }
  | { schedulerRole: true }
  | { runtimeBoundary: true }
  | { runtimeLayer: true }
  | { failureQueue: string }
  /** The revision build's CodeBuild project (infra/build/project.ts). */
  | { buildProject: true }
  | "*";

/** A condition value: a literal, or a resource's ARN (the runtime boundary). */
export type ConditionValue = string | string[] | Exclude<Resource, string>;

export interface SourceStatement {
  effect?: "Allow" | "Deny";
  actions: string[];
  resources: Resource[];
  conditions?: Record<string, Record<string, ConditionValue>>;
  /** Why a wildcard (in an action or a resource) is needed: the cdk-nag acknowledgment. */
  why?: string;
}

export interface RoleSource {
  description: string;
  statements: SourceStatement[];
}

export type PlatformRoleId = `api-${Group}` | "task" | "deploy" | `task-${string}`;

/** What the roles depend on: the tasks and the state machines (infra/state-machines/*.asl.json) of the app. */
export interface AppShape {
  tasks: TaskFunction[];
  machines: string[];
}

export const STATE_MACHINE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "state-machines");
export const SCHEDULE_GROUP = "agent-platform";

/** The app as it is: the task manifest and the ASL files. */
export function appShape(): AppShape {
  const machines = existsSync(STATE_MACHINE_DIR)
    ? readdirSync(STATE_MACHINE_DIR)
        .filter((f) => f.endsWith(".asl.json"))
        .sort()
        .map((f) => basename(f, ".asl.json"))
    : [];
  return { tasks: manifestTasks, machines };
}

// CDK's grant action sets (table.grantReadWriteData, bucket.grantReadWrite/grantRead/grantPut, key.grantEncryptDecrypt).
const TABLE_RW = [
  "dynamodb:BatchGetItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:ConditionCheckItem",
  "dynamodb:DeleteItem",
  "dynamodb:DescribeTable",
  "dynamodb:GetItem",
  "dynamodb:GetRecords",
  "dynamodb:GetShardIterator",
  "dynamodb:PutItem",
  "dynamodb:Query",
  "dynamodb:Scan",
  "dynamodb:UpdateItem",
];
const S3_READ = ["s3:GetBucket*", "s3:GetObject*", "s3:List*"];
const S3_PUT = [
  "s3:Abort*",
  "s3:PutObject",
  "s3:PutObjectLegalHold",
  "s3:PutObjectRetention",
  "s3:PutObjectTagging",
  "s3:PutObjectVersionTagging",
];
const KEY_RW = ["kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*"];

/** Read/write on these tables (by default every one) and their indexes, the platform bucket and the data key. */
const data = (tables = Object.keys(TABLES) as TableId[]): SourceStatement[] => [
  {
    actions: TABLE_RW,
    resources: tables.flatMap((table) => [
      { table },
      ...(TABLES[table].indexes?.length ? [{ table, index: "*" }] : []),
    ]),
    why: "Queries on each table's own GSIs need <table>/index/*; no other table is reachable.",
  },
  {
    actions: KEY_RW,
    resources: [{ key: "data" }],
    why: "Action groups of CDK's key encrypt/decrypt grant, on the data key only.",
  },
  {
    actions: [...S3_READ, ...S3_PUT, "s3:DeleteObject*"],
    resources: [{ bucket: "platform" }, { bucket: "platform", objects: "*" }],
    why: "Handlers read and write payloads under generated keys of the platform bucket only.",
  },
];

/** Seal and unseal secrets: a data key of the secrets key and its decrypt, only for contexts naming a workspace. */
const SECRETS: SourceStatement = {
  actions: ["kms:Decrypt", "kms:GenerateDataKey"],
  resources: [{ key: "secrets" }],
  conditions: { Null: { "kms:EncryptionContext:tenant_id": "false" } },
};

const artifactsRead: SourceStatement = {
  actions: S3_READ,
  resources: [{ bucket: "artifacts" }, { bucket: "artifacts", objects: "*" }],
  why: "Revision artifacts and logs live under generated keys of the artifact bucket only.",
};
const artifactsPut = (prefixes: string[]): SourceStatement => ({
  actions: S3_PUT,
  resources: prefixes.map((p) => ({ bucket: "artifacts" as const, objects: `${p}*` })),
  why: "Writes go under generated keys below their prefix of the artifact bucket only.",
});

/**
 * Start the machines of `machines` (those the app has), stop their executions, and inspect them (`describe`: the
 * sweepers).
 */
function executions(app: AppShape, machines: string[], describe = false): SourceStatement[] {
  const names = machines.filter((m) => app.machines.includes(m));
  if (!names.length) return [];
  return [
    { actions: ["states:StartExecution"], resources: names.map((stateMachine) => ({ stateMachine })) },
    {
      actions: [...(describe ? ["states:DescribeExecution"] : []), "states:StopExecution"],
      resources: names.map((executions) => ({ executions })),
      why: "Executions get generated names; access covers these machines of the app only.",
    },
  ];
}

/** Create and delete schedules (scheduled exports: shared/export/lifecycle.ts), passing the scheduler role. */
const SCHEDULES: SourceStatement[] = [
  {
    actions: ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"],
    resources: [{ schedules: SCHEDULE_GROUP }],
    why: "Schedules are created at runtime under generated names; access is limited to the agent-platform group.",
  },
  {
    actions: ["iam:PassRole"],
    resources: [{ schedulerRole: true }],
    conditions: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
  },
];

const invokeTasks = (names: string[]): SourceStatement[] =>
  names.length ? [{ actions: ["lambda:InvokeFunction"], resources: names.map((task) => ({ task })) }] : [];

const runtimes = { runtimeFunctions: true } as const;
const runtimeVersions = { runtimeFunctions: true, versions: true } as const;
const RUNTIMES_WHY =
  "Deployments' runtime functions, roles and log groups are made at deploy time, one per deployment: named agent-rt-<deployment> (roles under /agent-runtime/, log groups /aws/lambda/agent-rt-<deployment>), nothing else of the account.";

/** What each API group's handlers reach (checked against what they call: see the report of issue 26). */
function apiRole(group: Group, app: AppShape): RoleSource {
  const invoked = app.tasks.filter((t) => t.invokedBy?.includes(group)).map((t) => t.name);
  const statements: SourceStatement[] = [];
  // The system group (health check, OpenAPI document) makes no AWS call: no data grant. Runs, projects and
  // exports never touch agent state (the checkpoints table).
  if (group === "platform" || group === "export") statements.push(...data(["main", "runs"]));
  else if (group !== "system") statements.push(...data());
  if (group === "agent")
    statements.push(
      // The generative-UI files of revisions (the browser loads them without an API key): agent/ui/asset.
      {
        actions: ["s3:GetObject"],
        resources: [{ bucket: "artifacts", objects: "artifacts/*/ui/*" }],
        why: "Reads only the revisions' UI files of the artifact bucket.",
      },
      // The router invokes deployments' runtimes.
      { actions: ["lambda:InvokeFunction"], resources: [runtimes, runtimeVersions], why: RUNTIMES_WHY },
    );
  if (group === "control")
    statements.push(artifactsRead, {
      actions: ["s3:DeleteObject*"],
      resources: [{ bucket: "artifacts", objects: "*" }],
      why: "Deleting a deployment deletes its artifacts and logs, under generated keys of the artifact bucket only.",
    });
  // The control plane runs and supersedes revisions' pipelines, and seals and unseals secrets (deployments',
  // integrations' and OAuth tokens).
  if (group === "control") statements.push(...executions(app, [REVISION_MACHINE]), SECRETS);
  // Bulk export starts and cancels exports, schedules them, and seals destinations' credentials (the export
  // partition task, not this group, opens them).
  if (group === "export")
    statements.push(...executions(app, [EXPORT_MACHINE]), ...SCHEDULES, {
      ...SECRETS,
      actions: ["kms:GenerateDataKey"],
    });
  statements.push(...invokeTasks(invoked));
  return { description: `Agent platform API handlers of group ${group}`, statements };
}

/** The tasks' shared role: data, secrets (export partitions, the build's tasks), the build's artifacts. */
function taskRole(app: AppShape): RoleSource {
  return {
    description: "Agent platform workflow tasks and async workers",
    statements: [
      ...data(),
      SECRETS,
      artifactsRead,
      artifactsPut(["artifacts/", "builds/", "logs/"]),
      {
        actions: ["s3:DeleteObject*"],
        resources: ["builds/*", "artifacts/*", "logs/*", "runtimes/*"].map((objects) => ({
          bucket: "artifacts" as const,
          objects,
        })),
        why: "Deletes a build's exchange objects (builds/), and a deleted deployment's artifacts, logs and runtime code when a sweeper resumes its purge, under generated keys of the artifact bucket only.",
      },
      {
        actions: ["s3:ListBucketVersions"],
        resources: [{ bucket: "artifacts" }],
        conditions: { StringLike: { "s3:prefix": ["builds/*"] } },
        why: "Lists the versions of a build's exchange objects (the job held secrets) to delete every one.",
      },
      // The run sweeper invokes runtimes; a sweeper resuming a purge invokes its tasks.
      {
        actions: ["lambda:InvokeFunction"],
        resources: [
          runtimes,
          runtimeVersions,
          ...app.tasks.filter((t) => t.invokedByTasks).map((t) => ({ task: t.name })),
        ],
        why: RUNTIMES_WHY,
      },
      // The revision sweeper finds runtimes a platform upgrade left on an older layer.
      {
        actions: ["lambda:ListFunctions"],
        resources: ["*"],
        why: "lambda:ListFunctions has no resource-level permission: it can only name *.",
      },
      // The sweepers re-drive and inspect both pipelines; the export tasks start and schedule exports.
      ...executions(app, [REVISION_MACHINE, EXPORT_MACHINE], true),
      ...SCHEDULES,
    ],
  };
}

/** The deploy tasks': runtime functions and roles, each role bound by the runtime boundary, which stays. */
function deployRole(): RoleSource {
  const boundary = { runtimeBoundary: true } as const;
  const roles = { runtimeRoles: true } as const;
  return {
    description: "Agent platform deploy tasks: deployments' runtime functions and roles",
    statements: [
      ...data(),
      SECRETS,
      artifactsRead,
      artifactsPut(["logs/", "runtimes/"]),
      {
        actions: [
          "lambda:CreateFunction",
          "lambda:DeleteFunction",
          "lambda:DeleteFunctionConcurrency",
          "lambda:GetFunction",
          "lambda:InvokeFunction",
          "lambda:ListVersionsByFunction",
          "lambda:PublishVersion",
          "lambda:PutFunctionConcurrency",
          "lambda:PutFunctionEventInvokeConfig",
          "lambda:UpdateFunctionCode",
          "lambda:UpdateFunctionConfiguration",
        ],
        resources: [runtimes, runtimeVersions],
        why: RUNTIMES_WHY,
      },
      { actions: ["iam:DeleteRole", "iam:GetRole"], resources: [roles], why: RUNTIMES_WHY },
      // GetRole of a role not made yet is checked against its ARN without the path: the first deploy's lookup.
      { actions: ["iam:GetRole"], resources: [{ runtimeRoles: true, byName: true }], why: RUNTIMES_WHY },
      {
        actions: ["logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:PutRetentionPolicy"],
        resources: [{ runtimeLogGroups: true }],
        why: RUNTIMES_WHY,
      },
      // Every role it creates, and every policy it puts on one, requires the runtime boundary on that role.
      {
        actions: [
          "iam:CreateRole",
          "iam:DeleteRolePolicy",
          "iam:PutRolePermissionsBoundary",
          "iam:PutRolePolicy",
        ],
        resources: [roles],
        conditions: { StringEquals: { "iam:PermissionsBoundary": boundary } },
        why: RUNTIMES_WHY,
      },
      // The boundary stays: neither removed from a role, nor replaced by another, nor edited or deleted.
      { effect: "Deny", actions: ["iam:DeleteRolePermissionsBoundary"], resources: ["*"] },
      {
        effect: "Deny",
        actions: ["iam:PutRolePermissionsBoundary"],
        resources: ["*"],
        conditions: { StringNotEquals: { "iam:PermissionsBoundary": boundary } },
      },
      {
        effect: "Deny",
        actions: [
          "iam:CreatePolicyVersion",
          "iam:DeletePolicy",
          "iam:DeletePolicyVersion",
          "iam:SetDefaultPolicyVersion",
        ],
        resources: [boundary],
      },
      {
        actions: ["iam:PassRole"],
        resources: [roles],
        conditions: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } },
        why: RUNTIMES_WHY,
      },
      { actions: ["lambda:GetLayerVersion"], resources: [{ runtimeLayer: true }] },
    ],
  };
}

/** A cleanup task's own role: list and delete under its prefixes of the platform bucket, read its table's stream. */
function cleanupRole(task: TaskFunction): RoleSource {
  const keys = (task.bucketCleanup ?? []).map((p) => `${p}*`);
  const statements: SourceStatement[] = [
    {
      actions: ["s3:ListBucket"],
      resources: [{ bucket: "platform" }],
      conditions: { StringLike: { "s3:prefix": keys } },
    },
    {
      actions: ["s3:DeleteObject"],
      resources: keys.map((objects) => ({ bucket: "platform" as const, objects })),
      why: "Deletes objects under generated keys below its prefixes of the platform bucket only.",
    },
  ];
  const on = task.ttlDeletes;
  if (on)
    statements.push(
      // It may read an item by its key (retention: is an expired attachment's run still there?).
      { actions: ["dynamodb:GetItem"], resources: [{ table: on.table }] },
      // The event source mapping reads the stream with the function's role (CDK's DynamoEventSource grants).
      {
        actions: ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
        resources: [{ tableStream: on.table }],
      },
      {
        actions: ["dynamodb:ListStreams"],
        resources: ["*"],
        why: "dynamodb:ListStreams (CDK's stream read grant for the event source mapping) has no resource-level permissions.",
      },
      { actions: ["kms:Decrypt", "kms:DescribeKey"], resources: [{ key: "data" }] },
      {
        actions: ["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"],
        resources: [{ failureQueue: task.name }],
      },
    );
  return { description: `Agent platform task ${task.name}: deletes platform bucket objects`, statements };
}

/** The role a task runs under. */
export function taskRoleId(task: TaskFunction): PlatformRoleId {
  if (task.bucketCleanup) return `task-${task.name}`;
  return task.deployRole ? "deploy" : "task";
}

/** Every platform function role of the app, by id. */
export function platformRoles(app: AppShape = appShape()): Map<PlatformRoleId, RoleSource> {
  const roles = new Map<PlatformRoleId, RoleSource>();
  for (const group of new Set(routes.map((r) => r.group))) roles.set(`api-${group}`, apiRole(group, app));
  if (app.tasks.length) {
    roles.set("task", taskRole(app));
    if (app.tasks.some((t) => t.deployRole)) roles.set("deploy", deployRole());
    for (const t of app.tasks) if (t.bucketCleanup) roles.set(`task-${t.name}`, cleanupRole(t));
  }
  return roles;
}

/**
 * What a state machine's role may call through its service integrations (the revision machine's Build state:
 * `codebuild:startBuild.sync`); undefined for a machine without any. In AWS, RevisionBuild.grantStartBuildSync
 * grants the same actions on the project (with the managed rule the integration's events need); locally the
 * engine's CodeBuild calls are signed as this role and checked against it.
 */
export function machineRole(machine: string): RoleSource | undefined {
  if (machine !== REVISION_MACHINE) return undefined;
  return {
    description: `Agent platform state machine ${machine}: its service integrations`,
    statements: [{ actions: BUILD_SYNC_ACTIONS, resources: [{ buildProject: true }] }],
  };
}
