import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeFunctionName } from "../../shared/containment/runtime-policy.ts";
import type { SynthTemplate } from "../quotas/cfn-render.ts";

// What `npm run aws:teardown` removes, in the order it must (docs/aws.md): (1) each deployment's runtime — its
// function, log group and role live outside CloudFormation, and a role still carrying the runtime boundary keeps
// the workflows stack from deleting that policy; (2) the stacks, each after every stack that depends on it;
// (3) what CloudFormation keeps by its DeletionPolicy (tables, buckets, keys, log groups): data the operator
// deletes on purpose. Worked out from the synthesized app, without AWS, so the order is tested here.

export interface RetainedResource {
  stack: string;
  logicalId: string;
  type: string;
  /** Its physical name when the template fixes one. */
  name?: string;
}

export interface TeardownPlan {
  /**
   * Deployment ids whose runtime function (agent-rt-<id>) or runtime role (/agent-runtime/agent-rt-<id>) exists:
   * each is removed whole (function, log group, role). A role outlives its function when a first deploy failed
   * between CreateRole and CreateFunction; it still carries the boundary, which the workflows stack must delete.
   */
  runtimes: string[];
  /** Top-level stacks, in the order they are deleted. */
  stacks: string[];
  retained: RetainedResource[];
}

/** The cloud assembly's stacks and what each depends on (manifest.json), stacks only. */
export function assemblyStacks(dir: string): { name: string; dependsOn: string[] }[] {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    artifacts: Record<string, { type: string; dependencies?: string[] }>;
  };
  const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === "aws:cloudformation:stack");
  const names = new Set(stacks.map(([n]) => n));
  return stacks.map(([name, a]) => ({ name, dependsOn: (a.dependencies ?? []).filter((d) => names.has(d)) }));
}

/** Stacks in deletion order: a stack goes only once no remaining stack depends on it. */
export function deletionOrder(stacks: { name: string; dependsOn: string[] }[]): string[] {
  const left = new Map(stacks.map((s) => [s.name, s]));
  const out: string[] = [];
  while (left.size) {
    const free = [...left.keys()]
      .filter((n) => ![...left.values()].some((s) => s.dependsOn.includes(n)))
      .sort();
    if (!free.length)
      throw new Error(`the stacks depend on each other in a cycle: ${[...left.keys()].join(", ")}`);
    for (const n of free) {
      out.push(n);
      left.delete(n);
    }
  }
  return out;
}

const NAME_PROPERTY: Record<string, string> = {
  "AWS::DynamoDB::Table": "TableName",
  "AWS::DynamoDB::GlobalTable": "TableName",
  "AWS::S3::Bucket": "BucketName",
  "AWS::Logs::LogGroup": "LogGroupName",
};

/** The resources a stack's deletion leaves behind (DeletionPolicy Retain or RetainExceptOnCreate). */
export function retainedResources(templates: SynthTemplate[]): RetainedResource[] {
  return templates.flatMap((t) =>
    Object.entries(t.template.Resources ?? {})
      .filter(([, r]) => ["Retain", "RetainExceptOnCreate"].includes(String(r.DeletionPolicy ?? "")))
      .map(([logicalId, r]) => {
        const name = r.Properties?.[NAME_PROPERTY[r.Type] ?? ""];
        return {
          stack: t.name,
          logicalId,
          type: r.Type,
          ...(typeof name === "string" ? { name } : {}),
        };
      }),
  );
}

/**
 * Deployment ids of the account's runtimes, from the names of their functions and of the roles under the runtime
 * path (a role's name is its function's), each once.
 */
export function runtimeDeployments(functionNames: string[], runtimeRoleNames: string[] = []): string[] {
  const prefix = runtimeFunctionName("");
  const ids = [...functionNames, ...runtimeRoleNames]
    .filter((n) => n.startsWith(prefix))
    .map((n) => n.slice(prefix.length));
  return [...new Set(ids)];
}

export function teardownPlan(
  dir: string,
  templates: SynthTemplate[],
  functionNames: string[],
  runtimeRoleNames: string[] = [],
): TeardownPlan {
  return {
    runtimes: runtimeDeployments(functionNames, runtimeRoleNames),
    stacks: deletionOrder(assemblyStacks(dir)),
    retained: retainedResources(templates),
  };
}

/** The plan as the dry run prints it. */
export function formatPlan(p: TeardownPlan): string {
  return [
    `1. Deployments' runtimes (function, log group, role; found by function or role): ${p.runtimes.length}`,
    ...p.runtimes.map((d) => `   ${runtimeFunctionName(d)}`),
    "2. Stacks, in this order:",
    ...p.stacks.map((s) => `   ${s}`),
    `3. Kept by CloudFormation (your data: delete each yourself, docs/aws.md): ${p.retained.length}`,
    ...p.retained.map((r) => `   ${r.stack} ${r.type} ${r.name ?? r.logicalId}`),
  ].join("\n");
}
