import { ArnFormat, Stack } from "aws-cdk-lib";
import { Effect, type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Construct, IConstruct } from "constructs";
import { type ResourceArns, renderStatement } from "../policies/render.ts";
import type { PlatformRoleId, RoleSource } from "../policies/roles.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledgeActions, acknowledgeResource } from "./nag.ts";

// The role sources rendered into the CDK app: each statement added to its role with the app's tokens, and each
// wildcard acknowledged to cdk-nag with the reason the source gives.

/** State machines get fixed names (agent-platform-<file>) so other stacks can build their ARNs. */
export const stateMachineName = (name: string) => `agent-platform-${name}`;

/** The app's resources as seen from `scope`'s stack; what only one stack has is passed in. */
export function cdkResourceArns(
  scope: Construct,
  data: DataStack,
  own: Pick<ResourceArns, "schedulerRole"> &
    Partial<Pick<ResourceArns, "runtimeBoundary" | "runtimeLayer" | "failureQueue">>,
): ResourceArns {
  const stack = Stack.of(scope);
  const refs = data.importInto(scope);
  const missing = (what: string) => () => {
    throw new Error(`a role source names ${what}, which ${stack.stackName} does not have`);
  };
  return {
    partition: stack.partition,
    region: stack.region,
    account: stack.account,
    table: (id) => refs.tables[id].tableArn,
    tableStream: (id) => data.streamArnIn(scope, id),
    bucket: (id) => (id === "platform" ? refs.bucket : refs.artifacts).bucketArn,
    key: (id) => (id === "data" ? refs.key : refs.secretsKey).keyArn,
    stateMachine: (name) =>
      stack.formatArn({
        service: "states",
        resource: "stateMachine",
        resourceName: stateMachineName(name),
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    schedulerRole: own.schedulerRole,
    runtimeBoundary: own.runtimeBoundary ?? missing("the runtime boundary"),
    runtimeLayer: own.runtimeLayer ?? missing("the runtime layer"),
    failureQueue: own.failureQueue ?? missing("a failure queue"),
  };
}

/** Which source each platform role of the app was rendered from, and with which ARNs (for the synth test). */
const rendered = new WeakMap<IConstruct, { id: PlatformRoleId; arns: ResourceArns }>();
export const renderedRoleOf = (role: IConstruct) => rendered.get(role);

/** Adds `source`'s statements to `role`, acknowledging each wildcard with the source's reason. */
export function applyRoleSource(
  role: IRole,
  id: PlatformRoleId,
  source: RoleSource,
  arns: ResourceArns,
): void {
  rendered.set(role, { id, arns });
  for (const st of source.statements) {
    const r = renderStatement(st, arns);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        effect: r.Effect === "Deny" ? Effect.DENY : Effect.ALLOW,
        actions: r.Action,
        resources: r.Resource,
        conditions: r.Condition,
      }),
    );
    if (r.Effect === "Deny") continue;
    const wild = (s: string) => s.includes("*");
    if (!st.why && (r.Action.some(wild) || r.Resource.some(wild)))
      throw new Error(`role ${id}: a statement with a wildcard (${r.Action.join(", ")}) says no why`);
    for (const res of r.Resource.filter(wild)) acknowledgeResource(role, res, st.why!);
    acknowledgeActions(role, r.Action.filter(wild), st.why!);
  }
}
