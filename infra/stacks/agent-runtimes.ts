import { ArnFormat, Stack } from "aws-cdk-lib";
import { ManagedPolicy, PolicyDocument } from "aws-cdk-lib/aws-iam";
import { Architecture, Code, LayerVersion, Runtime, RuntimeFamily } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { AGENT_ENTRY_POINTS } from "../../functions/routes.ts";
import { TASK_FUNCTION_PREFIX } from "../../shared/aws/tasks.ts";
import { NODE_VERSIONS } from "../../shared/build/graph-config.ts";
import { type PlatformRuntimeScope, runtimeBoundary } from "../../shared/containment/runtime-policy.ts";
import { bundleOf, dirBytes } from "../build/function-bundles.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledgeResource } from "./nag.ts";

// Deployments' runtimes in AWS (shared/agent/runtime): the platform's runtime code as a Lambda layer, which the
// deploy step puts under each deployment's own function, and the grants of the platform roles that manage,
// invoke and remove those functions and their roles. The functions and roles themselves are made at deploy
// time (one per deployment), so this app only names them by pattern: agent-rt-<deployment>, roles under
// /agent-runtime/.
/** The task runtimes send their traces to. */
export const TRACE_TASK = "AgentTraceIngest";

/** The runtime's layer content (infra/build/function-bundles.ts): /opt/nodejs/agent-runtime.mjs, one ESM file. */
export const runtimeLayerDir = (): string => bundleOf(AGENT_ENTRY_POINTS.runtime).dir;

/** The layer's size unzipped: the deploy step leaves room for it beside each revision's code. */
export const runtimeLayerBytes = (): number => dirBytes(runtimeLayerDir());

export function runtimeLayer(scope: Construct): LayerVersion {
  return new LayerVersion(scope, "AgentRuntimeLayer", {
    description: "Agent platform runtime: serves one deployment's graphs in that deployment's own function",
    // Every Node.js runtime the deploy step gives a deployment's function (langgraph.json node_version).
    compatibleRuntimes: NODE_VERSIONS.map((v) => new Runtime(`nodejs${v}.x`, RuntimeFamily.NODEJS)),
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(runtimeLayerDir()),
  });
}

const arn = (
  scope: Construct,
  service: string,
  resource: string,
  name: string,
  sep = ArnFormat.COLON_RESOURCE_NAME,
) => Stack.of(scope).formatArn({ service, resource, resourceName: name, arnFormat: sep });
export const traceFunctionArn = (scope: Construct) =>
  arn(scope, "lambda", "function", `${TASK_FUNCTION_PREFIX}${TRACE_TASK}`);

/** The account's runtime scope (runtime/policy.ts) with this app's ARNs, as seen from `scope`'s stack. */
function platformRuntimeScope(scope: Construct, data: DataStack): PlatformRuntimeScope {
  const stack = Stack.of(scope);
  const refs = data.importInto(scope);
  return {
    partition: stack.partition,
    region: stack.region,
    account: stack.account,
    tables: { main: refs.tables.main.tableArn, checkpoints: refs.tables.checkpoints.tableArn },
    bucketArn: refs.bucket.bucketArn,
    keyArn: refs.key.keyArn,
    artifactBucketArn: refs.artifacts.bucketArn,
    secretsKeyArn: refs.secretsKey.keyArn,
    traceFunctionArn: traceFunctionArn(scope),
  };
}

/**
 * The permissions boundary every runtime role carries (the deploy role may create none without it): the runtime
 * policy of any deployment, from the same generator as each role's own policy.
 */
export function runtimeBoundaryPolicy(scope: Construct, data: DataStack): ManagedPolicy {
  const doc = runtimeBoundary(platformRuntimeScope(scope, data));
  const policy = new ManagedPolicy(scope, "AgentRuntimeBoundary", {
    description: "Agent platform: the most any deployment's runtime role may do (its permissions boundary)",
    document: PolicyDocument.fromJson(doc),
  });
  for (const r of new Set(doc.Statement.flatMap((st) => st.Resource)))
    if (r.includes("*"))
      acknowledgeResource(
        policy,
        r,
        "A boundary covers every deployment's runtime: each role's own policy narrows it to its deployment.",
      );
  return policy;
}

/** PLATFORM_RUNTIME_SCOPE: what the deploy step writes into each runtime role's policy (runtime/policy.ts). */
export function runtimeEnvironment(
  scope: Construct,
  data: DataStack,
  boundaryArn?: string,
): Record<string, string> {
  return {
    PLATFORM_RUNTIME_SCOPE: Stack.of(scope).toJsonString({
      ...platformRuntimeScope(scope, data),
      ...(boundaryArn ? { boundaryArn } : {}),
    }),
    AGENT_TRACE_FUNCTION: traceFunctionArn(scope),
  };
}
