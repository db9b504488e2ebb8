import { join } from "node:path";
import { ArnFormat, DockerImage, Stack } from "aws-cdk-lib";
import { type IGrantable, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Architecture, Code, LayerVersion } from "aws-cdk-lib/aws-lambda";
import type { Construct, IConstruct } from "constructs";
import { buildSync } from "esbuild";
import { AGENT_ENTRY_POINTS } from "../../functions/routes.ts";
import { runtimeLogGroup } from "../../shared/agent/runtime/log-group.ts";
import { RUNTIME_ROLE_PATH, runtimeFunctionName } from "../../shared/agent/runtime/policy.ts";
import { TASK_FUNCTION_PREFIX } from "../../shared/aws/tasks.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledgeResource } from "./nag.ts";
import { ROOT, RUNTIME } from "./node-function.ts";

// Deployments' runtimes in AWS (shared/agent/runtime): the platform's runtime code as a Lambda layer, which the
// deploy step puts under each deployment's own function, and the grants of the platform roles that manage,
// invoke and remove those functions and their roles. The functions and roles themselves are made at deploy
// time (one per deployment), so this app only names them by pattern: agent-rt-<deployment>, roles under
// /agent-runtime/.
const RUNTIME_ENTRY = join(ROOT, "functions", `${AGENT_ENTRY_POINTS.runtime}.ts`);
/** The task runtimes send their traces to. */
export const TRACE_TASK = "AgentTraceIngest";

/** The runtime's layer content: /opt/nodejs/agent-runtime.mjs, one ESM file. */
export function bundleRuntimeLayer(outDir: string): void {
  buildSync({
    entryPoints: [RUNTIME_ENTRY],
    outfile: join(outDir, "nodejs", "agent-runtime.mjs"),
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    minify: true,
    banner: { js: "import { createRequire } from 'module';const require = createRequire(import.meta.url);" },
    logLevel: "error",
  });
}

export function runtimeLayer(scope: Construct): LayerVersion {
  return new LayerVersion(scope, "AgentRuntimeLayer", {
    description: "Agent platform runtime: serves one deployment's graphs in that deployment's own function",
    compatibleRuntimes: [RUNTIME],
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(join(ROOT, "functions", "agent"), {
      bundling: {
        // Required by the type but never run: local bundling either succeeds or throws esbuild's error.
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
        local: {
          tryBundle(outDir) {
            bundleRuntimeLayer(outDir);
            return true;
          },
        },
      },
    }),
  });
}

const arn = (
  scope: Construct,
  service: string,
  resource: string,
  name: string,
  sep = ArnFormat.COLON_RESOURCE_NAME,
) => Stack.of(scope).formatArn({ service, resource, resourceName: name, arnFormat: sep });
const functionsArn = (scope: Construct) => arn(scope, "lambda", "function", runtimeFunctionName("*"));
/** The runtimes' log groups (shared/agent/runtime/log-group.ts), which the deploy step makes with a retention. */
const logGroupsArn = (scope: Construct) => arn(scope, "logs", "log-group", runtimeLogGroup("*"));
const rolesArn = (scope: Construct) =>
  Stack.of(scope).formatArn({
    service: "iam",
    region: "",
    resource: "role",
    resourceName: `${RUNTIME_ROLE_PATH.slice(1)}${runtimeFunctionName("*")}`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
export const traceFunctionArn = (scope: Construct) =>
  arn(scope, "lambda", "function", `${TASK_FUNCTION_PREFIX}${TRACE_TASK}`);

/** PLATFORM_RUNTIME_SCOPE: what the deploy step writes into each runtime role's policy (runtime/policy.ts). */
export function runtimeEnvironment(scope: Construct, data: DataStack): Record<string, string> {
  const stack = Stack.of(scope);
  const refs = data.importInto(scope);
  return {
    PLATFORM_RUNTIME_SCOPE: stack.toJsonString({
      partition: stack.partition,
      region: stack.region,
      account: stack.account,
      tables: { main: refs.tables.main.tableArn, checkpoints: refs.tables.checkpoints.tableArn },
      bucketArn: refs.bucket.bucketArn,
      keyArn: refs.key.keyArn,
      traceFunctionArn: traceFunctionArn(scope),
    }),
    AGENT_TRACE_FUNCTION: traceFunctionArn(scope),
  };
}

export interface RuntimeGrants {
  /** Create and update functions and roles, publish versions (the deploy step). */
  deploy?: boolean;
  /** Invoke (the router: requests and the drains they ask for; the run sweeper's kicks; the deploy step's health check). */
  invoke?: boolean;
  /** Delete functions and roles (deleting a deployment). */
  remove?: boolean;
  /** The layer the deploy step attaches. */
  layerArn?: string;
}

export function grantRuntimes(scope: Construct, grantee: IGrantable & IConstruct, g: RuntimeGrants): void {
  const fns = functionsArn(scope);
  const roles = rolesArn(scope);
  const principal = grantee.grantPrincipal;
  const add = (actions: string[], resources: string[], conditions?: Record<string, unknown>) =>
    principal.addToPrincipalPolicy(new PolicyStatement({ actions, resources, conditions }));
  const lambdaActions = [
    ...(g.invoke ? ["lambda:InvokeFunction"] : []),
    ...(g.deploy
      ? [
          "lambda:GetFunction",
          "lambda:CreateFunction",
          "lambda:UpdateFunctionCode",
          "lambda:UpdateFunctionConfiguration",
          "lambda:PublishVersion",
          "lambda:PutFunctionConcurrency",
          "lambda:ListVersionsByFunction",
          "lambda:DeleteFunction",
        ]
      : []),
    ...(g.remove && !g.deploy ? ["lambda:DeleteFunction"] : []),
  ];
  if (lambdaActions.length) add(lambdaActions, [fns, `${fns}:*`]);
  const iamActions = [
    ...(g.deploy ? ["iam:GetRole", "iam:CreateRole", "iam:PutRolePolicy"] : []),
    ...(g.remove ? ["iam:DeleteRolePolicy", "iam:DeleteRole"] : []),
  ];
  if (iamActions.length) add(iamActions, [roles]);
  const logActions = [
    ...(g.deploy ? ["logs:CreateLogGroup", "logs:PutRetentionPolicy"] : []),
    ...(g.remove ? ["logs:DeleteLogGroup"] : []),
  ];
  if (logActions.length) add(logActions, [logGroupsArn(scope)]);
  if (g.deploy) {
    add(["iam:PassRole"], [roles], { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } });
    if (g.layerArn) add(["lambda:GetLayerVersion"], [g.layerArn]);
    // Finding the runtimes a platform upgrade left on an older layer (shared/agent/runtime/layer-check.ts).
    add(["lambda:ListFunctions"], ["*"]);
    acknowledgeResource(
      grantee,
      "*",
      "lambda:ListFunctions has no resource-level permission: it can only name *.",
    );
  }
  for (const r of [fns, `${fns}:*`, roles, logGroupsArn(scope)])
    acknowledgeResource(
      grantee,
      r,
      "Deployments' runtime functions, roles and log groups are made at deploy time, one per deployment: named agent-rt-<deployment> (roles under /agent-runtime/, log groups /aws/lambda/agent-rt-<deployment>), nothing else of the account.",
    );
}
