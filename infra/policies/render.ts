import { runtimeLogGroup } from "../../shared/agent/hosting/log-group.ts";
import { TASK_FUNCTION_PREFIX } from "../../shared/aws/tasks.ts";
import { RUNTIME_ROLE_PATH, runtimeFunctionName } from "../../shared/containment/runtime-policy.ts";
import type { TableId } from "../../shared/tables.ts";
import { buildProjectArn } from "../build/project.ts";
import type { ConditionValue, Resource, RoleSource, SourceStatement } from "./roles.ts";

/** Where the role sources' resources are: the CDK app's tokens or the local cloud's ARNs. */
export interface ResourceArns {
  partition: string;
  region: string;
  account: string;
  table(id: TableId): string;
  tableStream(id: TableId): string;
  bucket(id: "platform" | "artifacts"): string;
  key(id: "data" | "secrets"): string;
  stateMachine(name: string): string;
  schedulerRole(): string;
  runtimeBoundary(): string;
  runtimeLayer(): string;
  failureQueue(task: string): string;
}

/** One statement as IAM reads it (strings may hold CDK tokens). */
export interface RenderedStatement {
  Effect: "Allow" | "Deny";
  Action: string[];
  Resource: string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export function resourceArn(r: Resource, arns: ResourceArns): string {
  if (r === "*") return "*";
  const { partition: p, region, account } = arns;
  if ("table" in r) return r.index ? `${arns.table(r.table)}/index/${r.index}` : arns.table(r.table);
  if ("tableStream" in r) return arns.tableStream(r.tableStream);
  if ("bucket" in r) return r.objects ? `${arns.bucket(r.bucket)}/${r.objects}` : arns.bucket(r.bucket);
  if ("key" in r) return arns.key(r.key);
  if ("stateMachine" in r) return arns.stateMachine(r.stateMachine);
  if ("executions" in r)
    return `${arns.stateMachine(r.executions).replace(":stateMachine:", ":execution:")}:*`;
  if ("schedules" in r) return `arn:${p}:scheduler:${region}:${account}:schedule/${r.schedules}/*`;
  const functions = `arn:${p}:lambda:${region}:${account}:function:`;
  if ("task" in r) return `${functions}${TASK_FUNCTION_PREFIX}${r.task}`;
  if ("runtimeFunctions" in r) return `${functions}${runtimeFunctionName("*")}${r.versions ? ":*" : ""}`;
  if ("runtimeRoles" in r)
    return `arn:${p}:iam::${account}:role${r.byName ? "/" : RUNTIME_ROLE_PATH}${runtimeFunctionName("*")}`;
  if ("runtimeLogGroups" in r) return `arn:${p}:logs:${region}:${account}:log-group:${runtimeLogGroup("*")}`;
  if ("schedulerRole" in r) return arns.schedulerRole();
  if ("runtimeBoundary" in r) return arns.runtimeBoundary();
  if ("runtimeLayer" in r) return arns.runtimeLayer();
  if ("buildProject" in r) return buildProjectArn(p, region, account);
  return arns.failureQueue(r.failureQueue);
}

function conditionValue(v: ConditionValue, arns: ResourceArns): string | string[] {
  return typeof v === "string" || Array.isArray(v) ? v : resourceArn(v, arns);
}

export function renderStatement(st: SourceStatement, arns: ResourceArns): RenderedStatement {
  return {
    Effect: st.effect ?? "Allow",
    Action: st.actions,
    Resource: st.resources.map((r) => resourceArn(r, arns)),
    ...(st.conditions
      ? {
          Condition: Object.fromEntries(
            Object.entries(st.conditions).map(([op, kv]) => [
              op,
              Object.fromEntries(Object.entries(kv).map(([k, v]) => [k, conditionValue(v, arns)])),
            ]),
          ),
        }
      : {}),
  };
}

export function renderRole(role: RoleSource, arns: ResourceArns): RenderedStatement[] {
  return role.statements.map((st) => renderStatement(st, arns));
}
