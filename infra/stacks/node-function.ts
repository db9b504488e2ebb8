import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Duration, Size } from "aws-cdk-lib";
import { type IRole, ManagedPolicy, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, Code, Function as LambdaFunction, Runtime } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { API_TIMEOUT_SECONDS, bundleOf, DEFAULT_MEMORY_MB } from "../build/function-bundles.ts";
import { acknowledge } from "./nag.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const STATE_MACHINE_DIR = join(ROOT, "infra", "state-machines");

export const RUNTIME = Runtime.NODEJS_22_X;

export interface HandlerFunctionProps {
  /** Module under functions/ (without .ts) exporting `handler`. */
  handler: string;
  role: IRole;
  environment: Record<string, string>;
  timeout?: Duration;
  memoryMb?: number;
  /** Its /tmp (Lambda's default: 512 MB). */
  ephemeralStorageMb?: number;
  description?: string;
  /** A fixed function name (task functions: agent-platform-<Name>, so handlers can build their ARNs). */
  functionName?: string;
  /** Concurrent executions reserved for it, and its cap (infra/stacks/concurrency.ts); 0 or none: unreserved. */
  reservedConcurrency?: number;
}

/**
 * One ESM Lambda for a handler module, deployed from its bundle (infra/build/function-bundles.ts: the folder
 * the local cloud runs too), with its own log group so retention is bounded.
 */
export function handlerFunction(scope: Construct, id: string, props: HandlerFunctionProps): LambdaFunction {
  // Fails at synth, not at deploy, when the manifest names a module that is no platform function's entry.
  const bundle = bundleOf(props.handler);
  // Route ids have no "-" and task names are \w+, so "<id>-Logs" is never another handler's id (e.g. "<x>-logs").
  const logGroup = new LogGroup(scope, `${id}-Logs`, { retention: RetentionDays.ONE_MONTH });
  const fn = new LambdaFunction(scope, id, {
    code: Code.fromAsset(bundle.dir),
    handler: "index.handler",
    runtime: RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memoryMb ?? DEFAULT_MEMORY_MB,
    ...(props.ephemeralStorageMb ? { ephemeralStorageSize: Size.mebibytes(props.ephemeralStorageMb) } : {}),
    timeout: props.timeout ?? Duration.seconds(API_TIMEOUT_SECONDS),
    role: props.role,
    logGroup,
    description: props.description,
    functionName: props.functionName,
    reservedConcurrentExecutions: props.reservedConcurrency || undefined,
    environment: { ...props.environment, LOG_LEVEL: "info" },
  });
  acknowledge(
    fn,
    "L1",
    "Pinned to nodejs22.x on purpose: the bundle targets node22 and is tested on that runtime.",
  );
  return fn;
}

/** A Lambda execution role; callers add least-privilege grants for what its functions touch. */
export function lambdaRole(scope: Construct, id: string, description: string): Role {
  const role = new Role(scope, id, {
    assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
    description,
    managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName("service-role/AWSLambdaBasicExecutionRole")],
  });
  acknowledge(
    role,
    "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
    "AWSLambdaBasicExecutionRole only allows writing CloudWatch Logs; each function's log group is created by this app with a retention.",
  );
  return role;
}
