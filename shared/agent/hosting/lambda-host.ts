import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { relative, sep } from "node:path";
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  GetRoleCommand,
  PutRolePermissionsBoundaryCommand,
  PutRolePolicyCommand,
} from "@aws-sdk/client-iam";
import {
  CreateFunctionCommand,
  DeleteFunctionCommand,
  DeleteFunctionConcurrencyCommand,
  GetFunctionCommand,
  InvokeCommand,
  ListVersionsByFunctionCommand,
  PublishVersionCommand,
  PutFunctionConcurrencyCommand,
  PutFunctionEventInvokeConfigCommand,
  UpdateFunctionCodeCommand,
  UpdateFunctionConfigurationCommand,
  waitUntilFunctionActiveV2,
  waitUntilFunctionUpdatedV2,
} from "@aws-sdk/client-lambda";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { iam, lambdaControl, s3 } from "../../aws/clients.ts";
import { invokeTask } from "../../aws/invoke.ts";
import { RUNTIME_LAYER_BUDGET_BYTES, revisionTooLarge } from "../../aws/lambda-limits.ts";
import { files } from "../../build/artifacts.ts";
import type { GraphInfo } from "../../build/smoke.ts";
import { zip } from "../../build/zip.ts";
import { config } from "../../config.ts";
import {
  type PlatformRuntimeScope,
  type RuntimeScope,
  runtimeFunctionName,
  runtimePolicy,
  runtimeRoleInput,
} from "../../containment/runtime-policy.ts";
import { secretHash } from "../../crypto/secret-hash.ts";
import { DeployError } from "../../errors.ts";
import { logger } from "../../log.ts";
import { tableName } from "../../tables.ts";
import { splitPrelude } from "../runtime/lambda-protocol.ts";
import { type SealedEnvRef, sealRuntimeEnv } from "../runtime/sealed-env.ts";
import type { RuntimeConfig } from "../runtime/serve.ts";
import { invokeDrain } from "./drain-invoke.ts";
import { ensureRuntimeLogGroup, removeRuntimeLogGroup } from "./log-group.ts";
import type { RuntimeHost } from "./runtime-host.ts";

// A deployment's runtime in AWS: a Lambda function of its own (agent-rt-<deployment>), with a role of its own
// (runtime/policy.ts). The deploy step publishes a version per revision — code: the revision's bundles plus a
// one-line entry into the platform's runtime layer; environment: non-secret settings and where its sealed
// environment is (the deployment's secrets and langgraph.json env, runtime/sealed-env.ts) — checks it by invoking {kind: "health"}, and the
// activation transaction makes that version the one the router invokes. Deleting the deployment deletes both.

/**
 * What the CDK app tells the deploy step about the account (PLATFORM_RUNTIME_SCOPE): the runtime scope, and the
 * permissions boundary every runtime role must carry (the deploy role may create no role without it).
 */
type PlatformScope = PlatformRuntimeScope & { boundaryArn: string };
const platformScope = (): PlatformScope | undefined => {
  const scope = config.agent.runtimeScope;
  return scope ? JSON.parse(scope) : undefined;
};

/** Is this platform deployed to AWS with per-deployment runtime functions? */
export const lambdaRuntimes = (): boolean => Boolean(config.agent.runtimeScope);

/** Lambda's limit on a function's environment variables, in bytes of names and values. */
const MAX_ENV_BYTES = 4096;
const ENTRY = 'export { handler } from "/opt/nodejs/agent-runtime.mjs";\n';

export interface RuntimeDeploy {
  tenant_id: string;
  deployment_id: string;
  revision_id: string;
  artifact_dir: string;
  /** The deployment's secrets and its langgraph.json env. */
  env: Record<string, string>;
  graphs: GraphInfo[];
  tracing_project_id: string | null;
  /** langgraph.json `node_version` (a major the graph config allows); default: the newest. */
  node_version?: string;
}

/**
 * The environment of a runtime function: the settings the platform gives it and where its sealed environment is
 * (its own variables are opened at init, never part of the function's configuration).
 */
export function runtimeEnvironment(
  r: Omit<RuntimeDeploy, "env">,
  token: string,
  secrets: SealedEnvRef,
): Record<string, string> {
  const settings: Omit<RuntimeConfig, "artifact_dir"> = {
    tenant_id: r.tenant_id,
    deployment_id: r.deployment_id,
    revision_id: r.revision_id,
    graphs: r.graphs.map((g) => ({ ...g, nodes: [] })),
    tracing_project_id: r.tracing_project_id,
  };
  const env: Record<string, string> = {
    AGENT_RUNTIME_CONFIG: JSON.stringify(settings),
    AGENT_RUNTIME_SECRETS: JSON.stringify(secrets),
    AGENT_RUNTIME_TOKEN: token,
    AGENT_TRACE_FUNCTION: config.agent.traceFunction ?? "",
    AGENT_RUN_WORKER: "lambda",
    TABLE_MAIN: tableName("main"),
    TABLE_CHECKPOINTS: tableName("checkpoints"),
    PLATFORM_BUCKET: config.defaultBucket,
    LOG_LEVEL: config.logLevel,
    // The function sends its runs' webhooks itself, under the operator's address policy (shared/containment/egress.ts).
    EGRESS_ALLOW: config.egressAllow.join(","),
  };
  const bytes = Object.entries(env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (bytes > MAX_ENV_BYTES)
    throw new DeployError(
      `the runtime's settings take ${bytes} bytes; a Lambda function's environment holds ${MAX_ENV_BYTES}`,
    );
  return env;
}

/** The function's code: the revision's bundles and the entry into the runtime layer, as a zip in S3. */
/** The function's code unzipped: the revision's files and the entry module that loads the layer. */
async function revisionBytes(dir: string): Promise<number> {
  const sizes = await Promise.all((await files(dir)).map(async (path) => (await stat(path)).size));
  return sizes.reduce((a, b) => a + b, Buffer.byteLength(ENTRY));
}

async function uploadCode(r: RuntimeDeploy): Promise<{ S3Bucket: string; S3Key: string }> {
  const entries = await Promise.all(
    (await files(r.artifact_dir)).map(async (path) => ({
      name: relative(r.artifact_dir, path).split(sep).join("/"),
      data: await readFile(path),
    })),
  );
  entries.push({ name: "index.mjs", data: Buffer.from(ENTRY) });
  const key = `runtimes/${r.tenant_id}/${r.deployment_id}/${r.revision_id}.zip`;
  await s3().send(new PutObjectCommand({ Bucket: config.artifactBucket, Key: key, Body: zip(entries) }));
  return { S3Bucket: config.artifactBucket, S3Key: key };
}

const notFound = (err: unknown) =>
  ["ResourceNotFoundException", "NoSuchEntityException", "NoSuchEntity"].includes((err as Error)?.name);

/**
 * The runtime role by name, or undefined when there is none. IAM evaluates GetRole of a role that does not exist
 * against the ARN without its path, which the deploy role's grant on /agent-runtime/ does not cover: that
 * AccessDenied is taken as absent too, and CreateRole decides (it is refused if the role exists after all).
 */
export async function existingRole(RoleName: string) {
  try {
    return (await iam().send(new GetRoleCommand({ RoleName }))).Role;
  } catch (err) {
    if (
      notFound(err) ||
      (err as Error)?.name === "AccessDenied" ||
      (err as Error)?.name === "AccessDeniedException"
    )
      return undefined;
    throw err;
  }
}

async function ensureRole(scope: RuntimeScope, boundaryArn: string): Promise<string> {
  const input = runtimeRoleInput(scope, boundaryArn);
  const { RoleName } = input;
  const role = await existingRole(RoleName);
  let arn: string;
  if (role) {
    arn = role.Arn!;
    // A role made before boundaries (or with another) gets the platform's before any policy is put on it.
    if (role.PermissionsBoundary?.PermissionsBoundaryArn !== boundaryArn)
      await iam().send(new PutRolePermissionsBoundaryCommand({ RoleName, PermissionsBoundary: boundaryArn }));
  } else arn = (await iam().send(new CreateRoleCommand(input))).Role!.Arn!;
  await iam().send(
    new PutRolePolicyCommand({
      RoleName,
      PolicyName: "runtime",
      PolicyDocument: JSON.stringify(runtimePolicy(scope)),
    }),
  );
  return arn;
}

/** Retries what a freshly created role makes Lambda refuse for a few seconds (IAM is eventually consistent). */
async function whileRolePropagates<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const propagating =
        (err as Error)?.name === "InvalidParameterValueException" && /role/i.test((err as Error).message);
      if (!propagating || attempt >= 12) throw err;
      await new Promise((r) => setTimeout(r, 2500));
    }
  }
}

/**
 * A runtime's asynchronous invocations (its drains) are not left in Lambda's queue: no retry of a failed one, and
 * an event that waits (throttled) for longer than a minute is dropped. Its pending runs stay in the sweeper's
 * index, and the run sweeper (every minute) kicks their threads again: the platform re-drives them, with backoff
 * as long as the deployment is throttled, instead of Lambda retrying them for up to 6 hours.
 */
export const DRAIN_INVOKE_CONFIG = { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } as const;

/** How the drains of a published version are retried (the setting is per version: each new one gets it). */
export async function applyDrainRetries(FunctionName: string, Qualifier: string): Promise<void> {
  await lambdaControl().send(
    new PutFunctionEventInvokeConfigCommand({ FunctionName, Qualifier, ...DRAIN_INVOKE_CONFIG }),
  );
}

/**
 * The function's reservation (the CDK app's runtimeReservedConcurrency: held for it, and its cap), or none (the
 * account's unreserved pool, shared). A reservation the account has no room for fails the deploy naming the
 * setting.
 */
export async function applyCapacity(
  FunctionName: string,
  reserved: number | undefined,
  log: (line: string) => void,
) {
  const client = lambdaControl();
  if (reserved === undefined) await client.send(new DeleteFunctionConcurrencyCommand({ FunctionName }));
  else
    await client
      .send(new PutFunctionConcurrencyCommand({ FunctionName, ReservedConcurrentExecutions: reserved }))
      .catch((err: Error) => {
        if (err?.name !== "InvalidParameterValueException" && err?.name !== "LimitExceededException")
          throw err;
        throw new DeployError(
          `reserving ${reserved} concurrent executions for the runtime failed: ${err.message} (the account's ` +
            "concurrency holds no more reserved runtimes: delete a deployment, raise the quota, or lower the " +
            "app's runtimeReservedConcurrency)",
        );
      });
  log(
    reserved === undefined
      ? "Runtime concurrency: the account's shared pool"
      : `Runtime concurrency: ${reserved} reserved`,
  );
}

/**
 * The waits before the health check is tried again when the runtime was refused access at init: a role (or a
 * policy) made moments before has not reached every service yet (IAM is eventually consistent: the S3 read and the
 * KMS decrypt of the runtime's sealed environment run as the new role), which would fail a first deploy.
 */
export const HEALTH_RETRY_WAITS_MS = [2000, 4000, 8000];

/**
 * Invokes {kind: "health"} on the published version: answers its answer, or fails the deploy saying why. A check
 * refused access (an AccessDenied of the role's own calls at init) is tried again after each of `waits`.
 */
export async function checkRuntimeHealth(
  FunctionName: string,
  Qualifier: string,
  waits: number[] = HEALTH_RETRY_WAITS_MS,
): Promise<Buffer> {
  for (let attempt = 0; ; attempt++) {
    const health = await lambdaControl().send(
      new InvokeCommand({
        FunctionName,
        Qualifier,
        Payload: Buffer.from(JSON.stringify({ kind: "health" })),
      }),
    );
    const answer = Buffer.from(health.Payload ?? []);
    if (!health.FunctionError) return answer;
    const refused = /AccessDenied|not authorized to perform/.test(answer.toString());
    if (!refused || attempt >= waits.length)
      throw new DeployError(`the runtime failed to load the graphs: ${answer.toString()}`);
    await new Promise((r) => setTimeout(r, waits[attempt]));
  }
}

type WaiterOutcome = {
  state?: string;
  reason?: string | { Configuration?: { State?: string; StateReasonCode?: string; StateReason?: string } };
};
const waiterOutcome = (err: unknown): WaiterOutcome => {
  try {
    return JSON.parse((err as Error).message) as WaiterOutcome;
  } catch {
    throw err;
  }
};

/**
 * Publishes $LATEST as a version of the function and answers it once Lambda can invoke it. Lambda invokes a
 * function (a version too) only while it is Active, and asks automation that calls its API to check the state
 * first (https://docs.aws.amazon.com/lambda/latest/dg/functions-states.html): a version published Pending is
 * waited for (GetFunction of the qualified name, as the deploy role may), and one that ends Failed fails the deploy.
 */
export async function publishRuntimeVersion(
  FunctionName: string,
  revisionId: string,
  wait: { minDelay?: number; maxWaitTime: number } = { maxWaitTime: 300 },
): Promise<string> {
  const client = lambdaControl();
  const published = await client.send(
    new PublishVersionCommand({ FunctionName, Description: `revision ${revisionId}` }),
  );
  const Version = published.Version!;
  if (published.State === undefined || published.State === "Active") return Version;
  try {
    await waitUntilFunctionActiveV2({ client, ...wait }, { FunctionName, Qualifier: Version });
    return Version;
  } catch (err) {
    // The waiter's error holds, as JSON, its state and the last GetFunction answer (or why it stopped).
    const { state, reason } = waiterOutcome(err);
    const c = typeof reason === "object" ? reason?.Configuration : undefined;
    const why = c ? `${c.State}: ${[c.StateReasonCode, c.StateReason].filter(Boolean).join(" ")}` : reason;
    throw new DeployError(`the runtime's version ${Version} did not become Active (${state}, ${why})`);
  }
}

/**
 * Publishes the revision's runtime as a new version of the deployment's function and checks it loads its
 * graphs. Answers the version (made live by the activation transaction), the hash of the runtime's trace token,
 * and the graphs with their nodes (or the reason one failed to load).
 */
export async function deployRuntime(
  r: RuntimeDeploy,
  log: (line: string) => void,
): Promise<{ version: string; token_hash: string; graphs: GraphInfo[] }> {
  const platform = platformScope();
  if (!platform) throw new Error("PLATFORM_RUNTIME_SCOPE is not set");
  const { boundaryArn, ...account } = platform;
  const scope: RuntimeScope = { ...account, tenant_id: r.tenant_id, deployment_id: r.deployment_id };
  const FunctionName = runtimeFunctionName(r.deployment_id);
  const layer = config.agent.runtimeLayerArn;
  if (!layer) throw new Error("AGENT_RUNTIME_LAYER_ARN is not set");
  const Layers = [layer];
  // Before any AWS call (sealing, role, function): Lambda would refuse the code only after its upload.
  const tooLarge = revisionTooLarge(
    await revisionBytes(r.artifact_dir),
    config.agent.runtimeLayerBytes ?? RUNTIME_LAYER_BUDGET_BYTES,
  );
  if (tooLarge) throw new DeployError(tooLarge);
  const token = randomBytes(32).toString("hex");
  const secrets = await sealRuntimeEnv(r.tenant_id, r.deployment_id, r.revision_id, r.env);
  const Environment = { Variables: runtimeEnvironment(r, token, secrets) };
  // The revision's langgraph.json node_version picks the function's Node.js runtime.
  const Runtime = r.node_version === "24" ? "nodejs24.x" : "nodejs22.x";
  log(`Runtime ${Runtime}`);
  const Role = await ensureRole(scope, boundaryArn);
  log(`Runtime role ${Role}: this deployment's data only`);
  log(
    `Runtime logs ${await ensureRuntimeLogGroup(r.deployment_id)}, kept ${config.agent.runtimeLogRetentionDays} days`,
  );
  const Code = await uploadCode(r);
  const client = lambdaControl();
  const waiter = { client, maxWaitTime: 300 };
  let exists = true;
  await client.send(new GetFunctionCommand({ FunctionName })).catch((err) => {
    if (!notFound(err)) throw err;
    exists = false;
  });
  if (!exists) {
    await whileRolePropagates(() =>
      client.send(
        new CreateFunctionCommand({
          FunctionName,
          Role,
          Runtime,
          Architectures: ["arm64"],
          Handler: "index.handler",
          Code,
          Layers,
          Environment,
          Timeout: 900,
          // AGENT_RUNTIME_MEMORY_MB (1024 unless set): Lambda's memory, and locally the runtime's V8 heap.
          MemorySize: config.sandbox.memoryMb,
          Description: `Agent runtime of deployment ${r.deployment_id}`,
        }),
      ),
    );
    await waitUntilFunctionActiveV2(waiter, { FunctionName });
  } else {
    await client.send(new UpdateFunctionCodeCommand({ FunctionName, ...Code }));
    await waitUntilFunctionUpdatedV2(waiter, { FunctionName });
    await whileRolePropagates(() =>
      client.send(
        new UpdateFunctionConfigurationCommand({
          FunctionName,
          Role,
          Layers,
          Environment,
          Runtime,
          MemorySize: config.sandbox.memoryMb,
        }),
      ),
    );
    await waitUntilFunctionUpdatedV2(waiter, { FunctionName });
  }
  await applyCapacity(FunctionName, config.agent.runtimeReservedConcurrency, log);
  const Version = await publishRuntimeVersion(FunctionName, r.revision_id);
  log(`Runtime ${FunctionName} version ${Version} published`);
  await applyDrainRetries(FunctionName, Version);
  const answer = await checkRuntimeHealth(FunctionName, Version);
  const split = splitPrelude(answer);
  if (split?.prelude.statusCode !== 200)
    throw new DeployError(`the runtime's health check answered ${split?.prelude.statusCode ?? "nothing"}`);
  const loaded = JSON.parse(split.rest.toString("utf8")) as Omit<GraphInfo, "export_name">[];
  const graphs = r.graphs.map((g) => {
    const l = loaded.find((n) => n.graph_id === g.graph_id);
    return { ...g, nodes: l?.nodes ?? [], ...(l?.error ? { error: l.error } : {}) };
  });
  return { version: Version, token_hash: secretHash(token), graphs };
}

/** Deletes the function's versions other than those still serving or about to (code storage is limited). */
export async function pruneRuntimeVersions(deploymentId: string, keep: string[]): Promise<void> {
  const FunctionName = runtimeFunctionName(deploymentId);
  let Marker: string | undefined;
  do {
    const page = await lambdaControl().send(new ListVersionsByFunctionCommand({ FunctionName, Marker }));
    for (const v of page.Versions ?? [])
      if (v.Version && v.Version !== "$LATEST" && !keep.includes(v.Version))
        await lambdaControl()
          .send(new DeleteFunctionCommand({ FunctionName, Qualifier: v.Version }))
          .catch((err) => logger.warn("deleting an old runtime version failed", { error: err }));
    Marker = page.NextMarker;
  } while (Marker);
}

/** The RuntimeHost of platform functions in AWS. */
export function lambdaRuntimeHost(
  activeVersion: (tenant: string, deployment: string) => Promise<string | undefined>,
): RuntimeHost {
  return {
    async kick(tenantId, deploymentId, threadId) {
      const version = await activeVersion(tenantId, deploymentId);
      if (version) await invokeDrain(tenantId, deploymentId, version, threadId);
    },
    // The activation transaction switched the version the router invokes: nothing to start.
    async activated() {},
    // Only the deploy role may delete runtime functions and roles: the platform asks its RuntimeRemove task.
    async remove(tenantId, deploymentId) {
      await invokeTask("RuntimeRemove", { tenant_id: tenantId, deployment_id: deploymentId });
    },
  };
}

/** Deletes a deployment's runtime function, its log group and its role (the RuntimeRemove task, under the deploy role). */
export async function removeRuntime(deploymentId: string): Promise<void> {
  const name = runtimeFunctionName(deploymentId);
  await lambdaControl()
    .send(new DeleteFunctionCommand({ FunctionName: name }))
    .catch((err) => {
      if (!notFound(err)) throw err;
    });
  await removeRuntimeLogGroup(deploymentId);
  for (const call of [
    () => iam().send(new DeleteRolePolicyCommand({ RoleName: name, PolicyName: "runtime" })),
    () => iam().send(new DeleteRoleCommand({ RoleName: name })),
  ])
    await call().catch((err) => {
      if (!notFound(err)) throw err;
    });
}
