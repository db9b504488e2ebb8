import { createServer } from "node:http";
import { routeId, routes, servedByRuntime } from "../../functions/routes.ts";
import { config } from "../../shared/config.ts";
import { tableName } from "../../shared/tables.ts";
import { type ResourceArns, renderRole } from "../policies/render.ts";
import {
  type AppShape,
  appShape,
  machineRole,
  type PlatformRoleId,
  platformRoles,
  taskRoleId,
} from "../policies/roles.ts";
import { listen, withoutRequestTimeouts } from "./http-util.ts";
import { platformRoleArn } from "./operator.ts";
import { localKeyArns, localKmsKeys, mintRuntimeCredentials } from "./policy-proxy/credentials.ts";
import { createPolicyProxy, type PolicyProxyOptions, type ProxyPrincipal } from "./policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "./policy-proxy/local-tables.ts";
import { localStateMachineArn } from "./sfn.ts";

// The role sources rendered for the local cloud: its account and region, its tables, buckets, keys and machines,
// and one access key pair per role, which the policy proxy checks each signed call against.

/** The local cloud's resources as ARNs (what the proxy sees a request name). */
export function localResourceArns(region = config.region): ResourceArns {
  const arn = (service: string, resource: string) =>
    `arn:aws:${service}:${region}:${LOCAL_ACCOUNT}:${resource}`;
  const keys = localKeyArns(region);
  return {
    partition: "aws",
    region,
    account: LOCAL_ACCOUNT,
    table: (id) => arn("dynamodb", `table/${tableName(id)}`),
    tableStream: (id) => arn("dynamodb", `table/${tableName(id)}/stream/*`),
    bucket: (id) => `arn:aws:s3:::${id === "platform" ? config.checkpointBucket : config.artifactBucket}`,
    key: (id) => keys[id],
    // As the local cloud names its machines (cloud.ts: localStateMachineArn(name), in its default region).
    stateMachine: (name) => localStateMachineArn(name),
    schedulerRole: () => config.wiring.schedulerRoleArn,
    runtimeBoundary: () => `arn:aws:iam::${LOCAL_ACCOUNT}:policy/agent-runtime-boundary`,
    runtimeLayer: () => arn("lambda", "layer:agent-runtime:1"),
    failureQueue: (task) => arn("sqs", `${task}Failures`),
  };
}

/** The role each platform function runs under (by its id in infra/build/function-bundles.ts). */
export function roleOfFunction(functionId: string, app: AppShape = appShape()): PlatformRoleId | undefined {
  if (functionId === "AgentRouter") return "api-agent";
  if (functionId.startsWith("Task-")) {
    const task = app.tasks.find((t) => `Task-${t.name}` === functionId);
    return task ? taskRoleId(task) : undefined;
  }
  const route = routes.find((r) => !servedByRuntime(r) && routeId(r) === functionId);
  return route ? `api-${route.group}` : undefined;
}

/** A platform role's identity on the local cloud: its own key pair and its rendered policy. */
export interface PlatformRolePrincipal extends ProxyPrincipal {
  role: PlatformRoleId;
}

/**
 * Every platform role of the app with freshly minted credentials and its policy rendered with the local ARNs:
 * what the policy proxy takes as its principals (principalOf) for the platform functions' calls.
 */
export function platformPrincipals(
  app: AppShape = appShape(),
  region = config.region,
): Map<PlatformRoleId, PlatformRolePrincipal> {
  const arns = localResourceArns(region);
  const out = new Map<PlatformRoleId, PlatformRolePrincipal>();
  for (const [role, source] of platformRoles(app))
    out.set(role, {
      ...mintRuntimeCredentials(),
      role,
      arn: platformRoleArn(role),
      policy: {
        Version: "2012-10-17",
        Statement: renderRole(source, arns).map((st, i) => ({ Sid: `S${i}`, ...st })),
      },
    });
  return out;
}

/**
 * The state machines' roles with service integrations (machineRole), as principals: what the local Step Functions
 * engine signs those integrations' calls with (the revision machine's CodeBuild calls).
 */
export function machinePrincipals(
  app: AppShape = appShape(),
  region = config.region,
): Map<string, ProxyPrincipal> {
  const arns = localResourceArns(region);
  const out = new Map<string, ProxyPrincipal>();
  for (const machine of app.machines) {
    const source = machineRole(machine);
    if (!source) continue;
    out.set(machine, {
      ...mintRuntimeCredentials(),
      arn: platformRoleArn(`${machine}-machine`),
      policy: {
        Version: "2012-10-17",
        Statement: renderRole(source, arns).map((st, i) => ({ Sid: `S${i}`, ...st })),
      },
    });
  }
  return out;
}

/** The proxy's principal lookup over these principals and `others` (the operator), by access key id. */
export function principalOf(
  principals: Map<PlatformRoleId, PlatformRolePrincipal>,
  others: ProxyPrincipal[] = [],
): (accessKeyId: string) => ProxyPrincipal | undefined {
  const byKey = new Map([...principals.values(), ...others].map((p) => [p.accessKeyId, p]));
  return (id) => byKey.get(id);
}

/**
 * The policy proxy for every caller outside the sandboxes, listening on loopback: the platform functions under their
 * roles, and the operator (operator.ts). The local cloud's AWS endpoint: its backends answer nothing else.
 */
export interface PlatformRoleProxy {
  url: string;
  principals: Map<PlatformRoleId, PlatformRolePrincipal>;
  /** The state machines' roles (machinePrincipals), by machine name. */
  machines: Map<string, ProxyPrincipal>;
  /**
   * What a platform function (its id in platformFunctions()) gets in its environment: its role's key pair and
   * every AWS endpoint at the proxy; undefined for a function without a platform role (the agent runtime).
   */
  environmentFor(functionId: string): Record<string, string> | undefined;
  /** The environment of a caller with these keys: every AWS endpoint at the proxy. */
  environmentOf(keys: { accessKeyId: string; secretAccessKey: string }): Record<string, string>;
  close(): Promise<void>;
}

/** One proxy serves every service: it tells them apart by the signature's credential scope. */
const PROXIED_SERVICES = [
  "DYNAMODB",
  "S3",
  "KMS",
  "SFN",
  "LAMBDA",
  "SCHEDULER",
  "IAM",
  "CLOUDWATCH_LOGS",
  "CODEBUILD",
];

export async function startPlatformRoleProxy(
  upstream: PolicyProxyOptions["upstream"],
  opts: {
    operator?: ProxyPrincipal;
    port?: number;
    region?: string;
    /** The local IAM's roles, which IAM calls are checked against. */
    iamRole?: PolicyProxyOptions["iamRole"];
  } = {},
): Promise<PlatformRoleProxy> {
  const region = opts.region ?? config.region;
  const principals = platformPrincipals(appShape(), region);
  const machines = machinePrincipals(appShape(), region);
  const server = withoutRequestTimeouts(
    createServer(
      createPolicyProxy({
        principal: principalOf(principals, [...machines.values(), ...(opts.operator ? [opts.operator] : [])]),
        upstream,
        region,
        kms: localKmsKeys(region),
        ...(opts.iamRole ? { iamRole: opts.iamRole } : {}),
      }),
    ),
  );
  const url = `http://127.0.0.1:${await listen(server, opts.port ?? 0, "127.0.0.1")}`;
  const environmentOf = (keys: { accessKeyId: string; secretAccessKey: string }) => ({
    AWS_ACCESS_KEY_ID: keys.accessKeyId,
    AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
    AWS_REGION: region,
    ...Object.fromEntries(PROXIED_SERVICES.map((s) => [`AWS_ENDPOINT_URL_${s}`, url])),
  });
  return {
    url,
    principals,
    machines,
    environmentFor(functionId) {
      const role = roleOfFunction(functionId);
      const p = role && principals.get(role);
      return p ? environmentOf(p) : undefined;
    },
    environmentOf,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
