import { type Authorization, Refused } from "./refusal.ts";
import { decode } from "./sigv4.ts";

// A KMS, Step Functions, Lambda, EventBridge Scheduler, IAM, CloudWatch Logs or CodeBuild call (the services the local
// cloud's emulator speaks) as the IAM authorization requests AWS makes for it: its action on the resource the
// call names, with the condition keys its documentation lists (a KMS call's encryption context, the role a
// schedule or a function passes, a role's permissions boundary).

export type EmulatedService = "kms" | "states" | "lambda" | "scheduler" | "iam" | "logs" | "codebuild";
export const EMULATED_SERVICES: readonly EmulatedService[] = [
  "kms",
  "states",
  "lambda",
  "scheduler",
  "iam",
  "logs",
  "codebuild",
];

/** What of a request says which emulated service it is for: its method, raw target (path and query), X-Amz-Target and Content-Type. */
export interface WireShape {
  method: string;
  url: string;
  target: string | undefined;
  contentType: string | undefined;
}

const JSON_TARGETS: [string, EmulatedService][] = [
  ["TrentService.", "kms"],
  ["AWSStepFunctions.", "states"],
  ["Logs_20140328.", "logs"],
  ["CodeBuild_20161006.", "codebuild"],
];
const LAMBDA_PATH = /^\/(2015-03-31|2017-10-31|2019-09-25|2019-09-30|2021-11-15)\/functions(\/|$)/;

/**
 * The emulated service a request is for by its shape, as the emulator dispatches it (aws-emulator.ts) and as the
 * policy proxy requires it to agree with the service its signature names: a JSON protocol's X-Amz-Target on a POST to
 * `/` (KMS, Step Functions, CloudWatch Logs, CodeBuild); IAM's form-encoded POST to `/` without one; Lambda's and Scheduler's
 * REST paths without one. Undefined for anything else — among it a path a URL parser would read otherwise than its
 * bytes (dot segments, backslashes, a fragment), which the two could route differently.
 */
export function emulatedServiceOf(req: WireShape): EmulatedService | undefined {
  const path = req.url.split("?", 1)[0];
  let parsed: string;
  try {
    parsed = new URL(req.url, "http://local").pathname;
  } catch {
    return undefined;
  }
  if (parsed !== path || !path.startsWith("/")) return undefined;
  const form = (req.contentType ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded");
  if (req.target) {
    if (req.method !== "POST" || path !== "/" || form) return undefined;
    return JSON_TARGETS.find(([prefix]) => req.target!.startsWith(prefix))?.[1];
  }
  if (path === "/") return req.method === "POST" && form ? "iam" : undefined;
  if (LAMBDA_PATH.test(path)) return "lambda";
  if (path.startsWith("/schedules/")) return "scheduler";
  return undefined;
}

export interface ServiceArns {
  region: string;
  account: string;
  /** A KMS KeyId (key id, key ARN, alias name or alias ARN) as its key's ARN; undefined when no such key. */
  kmsKey(keyId: string): string | undefined;
  /** The key a ciphertext was made with (Decrypt need not name it). */
  kmsKeyOfCiphertext(blob: Buffer): string | undefined;
  /** An IAM role that exists: its ARN (with its path) and permissions boundary. */
  iamRole?(name: string): { arn: string; boundary?: string } | undefined;
}

export interface ServiceCall {
  /** The JSON protocols' X-Amz-Target (KMS, Step Functions), undefined for the REST ones. */
  target?: string;
  method: string;
  url: string;
  /** The parsed JSON body (an object, or undefined when there was none). */
  input: Record<string, unknown> | undefined;
}

const invalid = (msg: string) => new Refused("ValidationException", msg, 400);
const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

function requiredString(input: Record<string, unknown> | undefined, name: string): string {
  const v = str(input?.[name]);
  if (v === undefined)
    throw invalid(
      `1 validation error detected: Value null at '${name}' failed to satisfy constraint: Member must not be null`,
    );
  return v;
}

/** The Operation of `<Service>_<version>.<Operation>`-style targets; only the service's own prefix. */
function operationOf(target: string | undefined, prefix: string): string {
  if (!target?.startsWith(prefix) || !/^[A-Za-z]{1,64}$/.test(target.slice(prefix.length)))
    throw new Refused("UnknownOperationException", `Unknown operation ${target ?? "(none)"}`);
  return target.slice(prefix.length);
}

// KMS: the key is named by KeyId (Decrypt: by the ciphertext when absent); the encryption context becomes
// kms:EncryptionContext:<key> and kms:EncryptionContextKeys (https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html).
function kmsCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const op = operationOf(call.target, "TrentService.");
  const context: Record<string, string | string[]> = { "kms:CallerAccount": arns.account };
  const ec = call.input?.EncryptionContext;
  if (ec !== undefined) {
    if (typeof ec !== "object" || ec === null || Array.isArray(ec))
      throw invalid("EncryptionContext must be a map");
    const entries = Object.entries(ec as Record<string, unknown>);
    for (const [k, v] of entries) {
      if (typeof v !== "string") throw invalid("EncryptionContext values must be strings");
      context[`kms:EncryptionContext:${k}`] = v;
    }
    if (entries.length) context["kms:EncryptionContextKeys"] = entries.map(([k]) => k);
  }
  let key: string | undefined;
  const keyId = str(call.input?.KeyId);
  if (keyId !== undefined) key = arns.kmsKey(keyId);
  else if (op === "Decrypt") {
    const blob = str(call.input?.CiphertextBlob);
    if (blob === undefined) throw invalid("CiphertextBlob is required");
    key = arns.kmsKeyOfCiphertext(Buffer.from(blob, "base64"));
    if (!key)
      throw new Refused("InvalidCiphertextException", "The ciphertext refers to no key of this account", 400);
  } else requiredString(call.input, "KeyId");
  if (!key) throw new Refused("NotFoundException", `Key '${keyId}' does not exist`, 400);
  return [{ action: `kms:${op}`, resource: key, context }];
}

// Step Functions: each action on the state machine or the execution its input names
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsstepfunctions.html).
const SFN_RESOURCE: Record<string, string> = {
  StartExecution: "stateMachineArn",
  StartSyncExecution: "stateMachineArn",
  ListExecutions: "stateMachineArn",
  DescribeStateMachine: "stateMachineArn",
  StopExecution: "executionArn",
  DescribeExecution: "executionArn",
  GetExecutionHistory: "executionArn",
  RedriveExecution: "executionArn",
};
function statesCall(call: ServiceCall): Authorization[] {
  const op = operationOf(call.target, "AWSStepFunctions.");
  const field = Object.hasOwn(SFN_RESOURCE, op) ? SFN_RESOURCE[op] : undefined;
  const resource = field === undefined ? "*" : requiredString(call.input, field);
  if (field !== undefined && !resource.startsWith("arn:")) throw invalid(`Invalid Arn: '${resource}'`);
  return [{ action: `states:${op}`, resource, context: {} }];
}

/** `/a/b?c=d` as its decoded path segments and query (a malformed escape is the caller's 400). */
function splitUrl(url: string): { segments: string[]; query: URLSearchParams } {
  const [path, query = ""] = url.split("?", 2);
  try {
    return { segments: path.split("/").slice(1).map(decode), query: new URLSearchParams(query) };
  } catch {
    throw invalid("The request path is not well-formed");
  }
}

// Lambda's operations on a function, by `<method> <API version> <sub-resource>` of its REST path
// (https://docs.aws.amazon.com/lambda/latest/dg/lambda-api-permissions-ref.html).
const LAMBDA_ACTIONS: Record<string, string> = {
  "POST 2015-03-31 invocations": "InvokeFunction",
  "POST 2021-11-15 response-streaming-invocations": "InvokeFunction",
  "GET 2015-03-31 ": "GetFunction",
  "GET 2015-03-31 configuration": "GetFunctionConfiguration",
  "DELETE 2015-03-31 ": "DeleteFunction",
  "PUT 2015-03-31 code": "UpdateFunctionCode",
  "PUT 2015-03-31 configuration": "UpdateFunctionConfiguration",
  "POST 2015-03-31 versions": "PublishVersion",
  "GET 2015-03-31 versions": "ListVersionsByFunction",
  "PUT 2017-10-31 concurrency": "PutFunctionConcurrency",
  "DELETE 2017-10-31 concurrency": "DeleteFunctionConcurrency",
  "GET 2019-09-30 concurrency": "GetFunctionConcurrency",
  "PUT 2019-09-25 event-invoke-config": "PutFunctionEventInvokeConfig",
};

/**
 * A Lambda call's function as Lambda reads it: its name (a name, a partial `account:function:name` or an ARN) without
 * a qualifier, and the qualifier derived from the name or given as `?Qualifier=`. Both given and different is
 * refused, as Lambda refuses it; the proxy and the emulator read a call's function through this one function.
 */
export function qualifiedFunction(
  nameOrArn: string,
  qualifier: string | null | undefined,
): { name: string; qualifier?: string } {
  if (!/^[\w:.$-]{1,170}$/.test(nameOrArn)) throw invalid(`Invalid function name: '${nameOrArn}'`);
  const parts = nameOrArn.split(":");
  const lead = nameOrArn.startsWith("arn:") ? 6 : /^\d{12}:function:/.test(nameOrArn) ? 2 : 0;
  if (
    parts.length < lead + 1 ||
    parts.length > lead + 2 ||
    (lead === 6 && (parts[2] !== "lambda" || parts[5] !== "function"))
  )
    throw invalid(`Invalid function name: '${nameOrArn}'`);
  const derived = parts[lead + 1];
  if (derived !== undefined && qualifier && qualifier !== derived)
    throw invalid("The derived qualifier from the function name does not match the specified qualifier.");
  const q = derived ?? (qualifier || undefined);
  if (q !== undefined && !/^[\w$-]{1,128}$/.test(q)) throw invalid(`Invalid qualifier: '${q}'`);
  return { name: parts.slice(0, lead + 1).join(":"), ...(q !== undefined ? { qualifier: q } : {}) };
}

function functionArn(nameOrArn: string, arns: ServiceArns, qualifier: string | null | undefined): string {
  const { name, qualifier: q } = qualifiedFunction(nameOrArn, qualifier);
  const arn = name.startsWith("arn:")
    ? name
    : `arn:aws:lambda:${arns.region}:${arns.account}:function:${name.replace(/^\d{12}:function:/, "")}`;
  return q === undefined ? arn : `${arn}:${q}`;
}

/** The role a function is given (iam:PassRole to Lambda) and the layers it names (lambda:GetLayerVersion each). */
function passedToFunction(input: Record<string, unknown> | undefined): Authorization[] {
  const auths: Authorization[] = [];
  const role = str(input?.Role);
  if (role !== undefined)
    auths.push({
      action: "iam:PassRole",
      resource: role,
      context: { "iam:PassedToService": "lambda.amazonaws.com" },
    });
  const layers = input?.Layers;
  if (layers !== undefined && !Array.isArray(layers)) throw invalid("Layers must be a list");
  for (const layer of (layers ?? []) as unknown[]) {
    const arn = str(layer);
    if (arn === undefined || !arn.startsWith("arn:")) throw invalid(`Invalid layer: '${String(layer)}'`);
    auths.push({ action: "lambda:GetLayerVersion", resource: arn, context: {} });
  }
  return auths;
}

// Lambda: invoking (buffered or streamed) is lambda:InvokeFunction on the function's ARN, qualified when the call
// names a version or alias; the control plane's operations each their own action on it. Creating a function or
// changing its configuration also passes its role and reads its layers.
function lambdaCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const { segments, query } = splitUrl(call.url);
  // ListFunctions has no resource-level permission: it is checked against "*".
  if (
    call.method === "GET" &&
    segments.length === 2 &&
    segments[0] === "2015-03-31" &&
    segments[1] === "functions"
  )
    return [{ action: "lambda:ListFunctions", resource: "*", context: {} }];
  if (
    call.method === "POST" &&
    segments.length === 2 &&
    segments[0] === "2015-03-31" &&
    segments[1] === "functions"
  ) {
    const name = requiredString(call.input, "FunctionName");
    return [
      { action: "lambda:CreateFunction", resource: functionArn(name, arns, undefined), context: {} },
      ...passedToFunction(call.input),
    ];
  }
  const op =
    segments[1] === "functions" && (segments.length === 3 || segments.length === 4)
      ? LAMBDA_ACTIONS[`${call.method} ${segments[0]} ${segments[3] ?? ""}`]
      : undefined;
  if (!op)
    throw new Refused("UnknownOperationException", `${call.method} ${segments.join("/")} is not emulated`);
  const auths: Authorization[] = [
    { action: `lambda:${op}`, resource: functionArn(segments[2], arns, query.get("Qualifier")), context: {} },
  ];
  if (op === "UpdateFunctionConfiguration") auths.push(...passedToFunction(call.input));
  return auths;
}

// IAM (Query protocol: Action and members form-encoded): each action on the role it names — its ARN with its path
// when it exists, the path-less ARN when it does not (as IAM checks GetRole of a missing role) — with
// iam:PermissionsBoundary: the boundary a CreateRole or PutRolePermissionsBoundary sets, else the role's own
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html).
const IAM_ROLE_ACTIONS = [
  "CreateRole",
  "GetRole",
  "DeleteRole",
  "PutRolePolicy",
  "GetRolePolicy",
  "ListRolePolicies",
  "DeleteRolePolicy",
  "PutRolePermissionsBoundary",
  "DeleteRolePermissionsBoundary",
];
function iamCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const action = str(call.input?.Action);
  if (call.method !== "POST" || action === undefined || !IAM_ROLE_ACTIONS.includes(action))
    throw new Refused(
      "InvalidAction",
      `Could not find operation ${action ?? "(none)"} for version 2010-05-08`,
    );
  const name = requiredString(call.input, "RoleName");
  if (!/^[\w+=,.@-]{1,64}$/.test(name)) throw invalid(`Invalid role name: '${name}'`);
  const existing = arns.iamRole?.(name);
  const context: Record<string, string> = {};
  let resource = existing?.arn ?? `arn:aws:iam::${arns.account}:role/${name}`;
  if (action === "CreateRole") {
    const path = str(call.input?.Path) ?? "/";
    if (!/^(\/|\/[\u0021-\u007F]{1,510}\/)$/.test(path)) throw invalid(`Invalid path: '${path}'`);
    resource = `arn:aws:iam::${arns.account}:role${path}${name}`;
  }
  const boundary =
    action === "CreateRole" || action === "PutRolePermissionsBoundary"
      ? str(call.input?.PermissionsBoundary)
      : existing?.boundary;
  if (boundary !== undefined) context["iam:PermissionsBoundary"] = boundary;
  return [{ action: `iam:${action}`, resource, context }];
}

// CloudWatch Logs (JSON protocol): each action on the log group it names; DescribeLogGroups on every group.
const LOGS_GROUP_ACTIONS = [
  "CreateLogGroup",
  "DeleteLogGroup",
  "PutRetentionPolicy",
  "DeleteRetentionPolicy",
];
function logsCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const op = operationOf(call.target, "Logs_20140328.");
  const group = (name: string) => `arn:aws:logs:${arns.region}:${arns.account}:log-group:${name}`;
  if (op === "DescribeLogGroups")
    return [{ action: "logs:DescribeLogGroups", resource: group("*"), context: {} }];
  if (!LOGS_GROUP_ACTIONS.includes(op))
    throw new Refused("UnknownOperationException", `Logs_20140328.${op} is not emulated`);
  return [{ action: `logs:${op}`, resource: group(requiredString(call.input, "logGroupName")), context: {} }];
}

// CodeBuild (JSON protocol): each action on the project it names, a build's action on the build's project (a
// build id is `<project>:<uuid>`, its ARN `arn:…:build/<id>`)
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awscodebuild.html).
function codebuildCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const op = operationOf(call.target, "CodeBuild_20161006.");
  const project = (name: string) => `arn:aws:codebuild:${arns.region}:${arns.account}:project/${name}`;
  const ofBuild = (id: unknown) => {
    const bare = typeof id === "string" && id.includes(":build/") ? id.slice(id.indexOf(":build/") + 7) : id;
    const at = typeof bare === "string" ? bare.lastIndexOf(":") : -1;
    if (typeof bare !== "string" || at < 1)
      throw new Refused("InvalidInputException", `Invalid build ID: ${String(id)}`);
    return project(bare.slice(0, at));
  };
  const on = (resources: string[]) =>
    [...new Set(resources)].map((resource) => ({ action: `codebuild:${op}`, resource, context: {} }));
  if (op === "StartBuild") return on([project(requiredString(call.input, "projectName"))]);
  if (op === "StopBuild") return on([ofBuild(requiredString(call.input, "id"))]);
  if (op === "BatchGetBuilds") {
    const ids = call.input?.ids;
    if (!Array.isArray(ids) || !ids.length) throw new Refused("InvalidInputException", "ids is required");
    return on(ids.map(ofBuild));
  }
  throw new Refused("UnknownOperationException", `CodeBuild_20161006.${op} is not emulated`);
}

// EventBridge Scheduler: the schedule's ARN (its group's, "default" when unnamed); creating or updating one also
// passes its target's role (iam:PassRole, https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html).
const SCHEDULE_ACTION: Record<string, string> = {
  POST: "scheduler:CreateSchedule",
  PUT: "scheduler:UpdateSchedule",
  GET: "scheduler:GetSchedule",
  DELETE: "scheduler:DeleteSchedule",
};
function schedulerCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const { segments, query } = splitUrl(call.url);
  const action = SCHEDULE_ACTION[call.method];
  if (segments.length !== 2 || segments[0] !== "schedules" || !action)
    throw new Refused("UnknownOperationException", `${call.method} /${segments.join("/")} is not emulated`);
  // The group where the emulator (as Scheduler) reads it: a create's or update's body, a get's or delete's query.
  // A call naming it in the other place too could be checked for one group and run in another: refused.
  const writes = action === "scheduler:CreateSchedule" || action === "scheduler:UpdateSchedule";
  if (writes ? query.has("groupName") : call.input?.GroupName !== undefined)
    throw invalid("The schedule's group is named where this operation does not read it");
  const group = (writes ? str(call.input?.GroupName) : query.get("groupName")) ?? "default";
  const auths: Authorization[] = [
    {
      action,
      resource: `arn:aws:scheduler:${arns.region}:${arns.account}:schedule/${group}/${segments[1]}`,
      context: {},
    },
  ];
  if (writes) {
    const target = call.input?.Target as { RoleArn?: unknown } | undefined;
    const role = str(target?.RoleArn);
    if (role === undefined) throw invalid("Target.RoleArn is required");
    auths.push({
      action: "iam:PassRole",
      resource: role,
      context: { "iam:PassedToService": "scheduler.amazonaws.com" },
    });
  }
  return auths;
}

/** The authorizations AWS checks for one call to an emulated service; a call it cannot read is refused (4xx). */
export function serviceAuthorizations(
  service: EmulatedService,
  call: ServiceCall,
  arns: ServiceArns,
): Authorization[] {
  switch (service) {
    case "kms":
      return kmsCall(call, arns);
    case "states":
      return statesCall(call);
    case "lambda":
      return lambdaCall(call, arns);
    case "scheduler":
      return schedulerCall(call, arns);
    case "iam":
      return iamCall(call, arns);
    case "logs":
      return logsCall(call, arns);
    case "codebuild":
      return codebuildCall(call, arns);
  }
}
