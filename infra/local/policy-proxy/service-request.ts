import { type Authorization, Refused } from "./refusal.ts";
import { decode } from "./sigv4.ts";

// A KMS, Step Functions, Lambda or EventBridge Scheduler call (the services the local cloud's emulator speaks)
// as the IAM authorization requests AWS makes for it: its action on the resource the call names, with the
// condition keys its documentation lists (a KMS call's encryption context, the role a schedule passes).

export type EmulatedService = "kms" | "states" | "lambda" | "scheduler";
export const EMULATED_SERVICES: readonly EmulatedService[] = ["kms", "states", "lambda", "scheduler"];

export interface ServiceArns {
  region: string;
  account: string;
  /** A KMS KeyId (key id, key ARN, alias name or alias ARN) as its key's ARN; undefined when no such key. */
  kmsKey(keyId: string): string | undefined;
  /** The key a ciphertext was made with (Decrypt need not name it). */
  kmsKeyOfCiphertext(blob: Buffer): string | undefined;
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

// Lambda: invoking (buffered or streamed) is lambda:InvokeFunction on the function's ARN, qualified when the call
// names a version or alias (https://docs.aws.amazon.com/lambda/latest/dg/lambda-api-permissions-ref.html).
function lambdaCall(call: ServiceCall, arns: ServiceArns): Authorization[] {
  const { segments, query } = splitUrl(call.url);
  const invoke =
    call.method === "POST" &&
    segments.length === 4 &&
    ((segments[0] === "2015-03-31" && segments[3] === "invocations") ||
      (segments[0] === "2021-11-15" && segments[3] === "response-streaming-invocations")) &&
    segments[1] === "functions";
  if (!invoke)
    throw new Refused("UnknownOperationException", `${call.method} ${segments.join("/")} is not emulated`);
  const name = segments[2];
  if (!/^[\w:.$-]{1,170}$/.test(name)) throw invalid(`Invalid function name: '${name}'`);
  let arn = name.startsWith("arn:")
    ? name
    : `arn:aws:lambda:${arns.region}:${arns.account}:function:${name.replace(/^\d{12}:function:/, "")}`;
  const qualifier = query.get("Qualifier");
  if (qualifier) {
    if (!/^[\w$-]{1,128}$/.test(qualifier)) throw invalid(`Invalid qualifier: '${qualifier}'`);
    arn = `${arn}:${qualifier}`;
  }
  return [{ action: "lambda:InvokeFunction", resource: arn, context: {} }];
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
  const group = query.get("groupName") ?? str(call.input?.GroupName) ?? "default";
  const auths: Authorization[] = [
    {
      action,
      resource: `arn:aws:scheduler:${arns.region}:${arns.account}:schedule/${group}/${segments[1]}`,
      context: {},
    },
  ];
  if (action === "scheduler:CreateSchedule" || action === "scheduler:UpdateSchedule") {
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
  }
}
