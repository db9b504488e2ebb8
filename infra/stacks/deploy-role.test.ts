import type { Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { tasks } from "../../functions/task-manifest.ts";
import { runtimeBoundary } from "../../shared/containment/runtime-policy.ts";
import type { PlatformStacks } from "./index.ts";
import { synthesizedApp } from "./synthesized-app.ts";

// Issue 26 (findings 3 and 4): who may create runtime roles and functions, within which boundary, and where
// checkpoint blobs are. Synth without bundling (as stacks.test.ts).
let s: PlatformStacks;
beforeAll(async () => {
  s = (await synthesizedApp()).stacks;
}, 180_000);

const actionsOf = (st: any): string[] => [st.Action].flat();
const json = (v: unknown) => JSON.stringify(v);
/** Resolved CloudFormation of a stack's resources of a type, by logical id. */
const resources = (stack: Stack, type: string) => Template.fromStack(stack).findResources(type);
/** The logical id of the role a task function runs under. */
function roleOfTask(name: string): string {
  const [, fn] = Object.entries(resources(s.workflows, "AWS::Lambda::Function")).find(([, f]) =>
    String(f.Properties.Description).startsWith(`Task ${name} `),
  )!;
  return fn.Properties.Role["Fn::GetAtt"][0];
}
function statementsOfRole(stack: Stack, roleId: string): any[] {
  return Object.values(resources(stack, "AWS::IAM::Policy"))
    .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}
const boundaryId = () =>
  Object.keys(resources(s.workflows, "AWS::IAM::ManagedPolicy")).find((id) =>
    id.startsWith("AgentRuntimeBoundary"),
  )!;

describe("the deploy role (a role of its own for what creates runtime roles and functions)", () => {
  const deployTasks = tasks.filter((t) => t.deployRole).map((t) => t.name);

  it("is RevisionDeploy's and RuntimeRemove's, and no other task's", () => {
    expect(deployTasks.sort()).toEqual(["RevisionDeploy", "RuntimeRemove"]);
    const deployRole = roleOfTask("RevisionDeploy");
    expect(roleOfTask("RuntimeRemove")).toBe(deployRole);
    for (const t of tasks.filter((x) => !x.deployRole))
      expect(roleOfTask(t.name), t.name).not.toBe(deployRole);
  });

  it("leaves the shared task role and every API group no IAM and no Lambda create, update or delete", () => {
    const forbidden = (a: string) =>
      a.startsWith("iam:") && a !== "iam:PassRole"
        ? true
        : /^lambda:(Create|Update|Delete|Publish|PutFunctionConcurrency)/.test(a);
    const taskRole = roleOfTask("AgentTraceIngest");
    const taskStatements = statementsOfRole(s.workflows, taskRole);
    expect(taskStatements.length).toBeGreaterThan(0);
    expect(
      taskStatements
        .filter((st) => st.Effect === "Allow")
        .flatMap(actionsOf)
        .filter(forbidden),
    ).toEqual([]);
    // The only role the shared task role may pass is the scheduler's.
    for (const st of taskStatements.filter((x) => actionsOf(x).includes("iam:PassRole")))
      expect(json(st.Resource)).toContain("SchedulerRole");
    for (const group of s.api.groups.values()) {
      const all = Object.values(Template.fromStack(group).findResources("AWS::IAM::Policy")).flatMap(
        (p) => p.Properties.PolicyDocument.Statement,
      );
      expect(all.flatMap(actionsOf).filter(forbidden), group.node.id).toEqual([]);
    }
  });

  it("is how the control plane and the sweeper remove a deleted deployment's runtime: they may invoke RuntimeRemove", () => {
    const invokes = (statements: any[]) =>
      json(
        statements.filter((st) => actionsOf(st).includes("lambda:InvokeFunction")).map((st) => st.Resource),
      );
    const control = Object.values(
      Template.fromStack(s.api.groups.get("control")!).findResources("AWS::IAM::Policy"),
    ).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(invokes(control)).toContain("agent-platform-RuntimeRemove");
    const tasksRole = statementsOfRole(s.workflows, roleOfTask("RevisionSweeper"));
    expect(invokes(tasksRole)).toContain("agent-platform-RuntimeRemove");
    expect(invokes(tasksRole)).toContain("agent-platform-PurgeDeploymentData");
  });

  it("may create a role, or put a policy on one, only with the runtime boundary on it", () => {
    const st = statementsOfRole(s.workflows, roleOfTask("RevisionDeploy"));
    const boundary = { Ref: boundaryId() };
    const guarded = [
      "iam:CreateRole",
      "iam:PutRolePolicy",
      "iam:DeleteRolePolicy",
      "iam:PutRolePermissionsBoundary",
    ];
    for (const action of guarded) {
      const allows = st.filter((x) => x.Effect === "Allow" && actionsOf(x).includes(action));
      expect(allows.length, action).toBe(1);
      expect(allows[0].Condition).toEqual({ StringEquals: { "iam:PermissionsBoundary": boundary } });
      expect(json(allows[0].Resource)).toContain("role/agent-runtime/agent-rt-*");
    }
    // No way to attach a managed policy (AWS's AdministratorAccess) at all.
    expect(st.flatMap(actionsOf).filter((a) => /^iam:(Attach|Update|Tag)/.test(a))).toEqual([]);
    // The deploy step is told the boundary it must pass (runtimeRoleInput).
    const fn = Object.values(resources(s.workflows, "AWS::Lambda::Function")).find((f) =>
      String(f.Properties.Description).startsWith("Task RevisionDeploy "),
    )!;
    expect(json(fn.Properties.Environment.Variables.PLATFORM_RUNTIME_SCOPE)).toContain(
      `"boundaryArn\\":\\"",{"Ref":"${boundaryId()}"}`,
    );
  });

  // Issue 35: IAM checks GetRole of a role that does not exist yet against its ARN without the path.
  it("may look a runtime role up by name before it exists, and get only runtime roles", () => {
    const st = statementsOfRole(s.workflows, roleOfTask("RevisionDeploy"));
    const getRole = st.filter((x) => x.Effect === "Allow" && actionsOf(x).includes("iam:GetRole"));
    const arns = getRole.map((x) => json(x.Resource));
    expect(arns.some((a) => a.includes("role/agent-runtime/agent-rt-*"))).toBe(true);
    expect(arns.some((a) => a.includes(":role/agent-rt-*"))).toBe(true);
    for (const a of arns) expect(a).toMatch(/agent-rt-\*/);
  });

  it("sets each runtime's reservation (or removes it) and its drains' async retries, on runtime functions only", () => {
    const st = statementsOfRole(s.workflows, roleOfTask("RevisionDeploy"));
    for (const action of [
      "lambda:PutFunctionConcurrency",
      "lambda:DeleteFunctionConcurrency",
      "lambda:PutFunctionEventInvokeConfig",
    ]) {
      const allows = st.filter((x) => x.Effect === "Allow" && actionsOf(x).includes(action));
      expect(allows.length, action).toBe(1);
      expect(json(allows[0].Resource), action).toContain("function:agent-rt-*");
    }
  });

  it("may neither remove a role's boundary, nor set another, nor change or delete the boundary policy", () => {
    const denies = statementsOfRole(s.workflows, roleOfTask("RevisionDeploy")).filter(
      (x) => x.Effect === "Deny",
    );
    const denied = (action: string) => denies.filter((x) => actionsOf(x).includes(action));
    expect(denied("iam:DeleteRolePermissionsBoundary")[0].Resource).toBe("*");
    expect(denied("iam:PutRolePermissionsBoundary")[0].Condition).toEqual({
      StringNotEquals: { "iam:PermissionsBoundary": { Ref: boundaryId() } },
    });
    for (const a of [
      "iam:CreatePolicyVersion",
      "iam:DeletePolicy",
      "iam:DeletePolicyVersion",
      "iam:SetDefaultPolicyVersion",
    ])
      expect(denied(a)[0]?.Resource, a).toEqual({ Ref: boundaryId() });
  });

  it("bounds runtime roles by the runtime policy of any deployment: no action a runtime's own policy lacks", () => {
    const doc = resources(s.workflows, "AWS::IAM::ManagedPolicy")[boundaryId()].Properties.PolicyDocument;
    const expected = runtimeBoundary({
      partition: "p",
      region: "r",
      account: "a",
      tables: { main: "m", checkpoints: "c" },
      bucketArn: "b",
      keyArn: "k",
      artifactBucketArn: "ab",
      secretsKeyArn: "sk",
      traceFunctionArn: "t",
    });
    expect(doc.Statement.map((st: any) => [st.Sid, st.Effect, actionsOf(st).sort()])).toEqual(
      expected.Statement.map((st) => [st.Sid, st.Effect, [...st.Action].sort()]),
    );
    expect(json(doc)).not.toMatch(/"Action":"\*"|"iam:|"lambda:(Create|Update|Delete)/);
  });
});

describe("checkpoint blobs: one bucket for runtimes and the purge", () => {
  it("names the platform bucket in the runtime scope and the deploy step's PLATFORM_BUCKET, and lets the purge delete there", () => {
    const fn = Object.values(resources(s.workflows, "AWS::Lambda::Function")).find((f) =>
      String(f.Properties.Description).startsWith("Task RevisionDeploy "),
    )!;
    const vars = fn.Properties.Environment.Variables;
    // The runtime's PLATFORM_BUCKET is the deploy step's (lambda-host.ts); its role's bucketArn is the scope's.
    expect(json(vars.PLATFORM_BUCKET)).toContain("AgentPlatformData:BucketName");
    expect(json(vars.PLATFORM_RUNTIME_SCOPE)).toContain(
      `"bucketArn\\":\\"",{"Fn::ImportValue":"AgentPlatformData:BucketArn"}`,
    );
    const purge = statementsOfRole(s.workflows, roleOfTask("PurgeDeploymentData"));
    const deletes = purge.filter(
      (st) => st.Effect === "Allow" && actionsOf(st).some((a) => a.startsWith("s3:DeleteObject")),
    );
    expect(json(deletes.map((st) => st.Resource))).toMatch(/AgentPlatformData:BucketArn"\}\s*,\s*"\/\*"/);
  });
});

describe("the secrets key (apart from the data key)", () => {
  const onSecretsKey = (stack: Stack) =>
    Object.values(resources(stack, "AWS::IAM::Policy")).flatMap((p) =>
      p.Properties.PolicyDocument.Statement.filter((st: any) =>
        json(st.Resource).includes("SecretsKeyArn"),
      ).map((st: any) => ({ roles: p.Properties.Roles.map((r: any) => r.Ref), st })),
    );

  it("is a rotated key of its own, alias/agent-platform-secrets, named to every function as SECRETS_KEY_ID", () => {
    const t = Template.fromStack(s.data);
    t.resourceCountIs("AWS::KMS::Key", 2);
    t.hasResourceProperties("AWS::KMS::Alias", { AliasName: "alias/agent-platform-secrets" });
    for (const key of Object.values(t.findResources("AWS::KMS::Key")))
      expect(key.Properties.EnableKeyRotation).toBe(true);
    const fns = [s.workflows, ...s.api.groups.values()].flatMap((st) =>
      Object.values(resources(st, "AWS::Lambda::Function")).filter(
        (f) => f.Properties.Environment?.Variables?.TABLE_MAIN,
      ),
    );
    expect(fns.length).toBeGreaterThan(0);
    for (const f of fns)
      expect(json(f.Properties.Environment.Variables.SECRETS_KEY_ID)).toContain("SecretsKeyArn");
  });

  it("is usable only where secrets are sealed or unsealed, only for contexts that name a workspace", () => {
    const grantees: string[] = [];
    for (const [name, stack] of [
      ["workflows", s.workflows],
      ...[...s.api.groups.entries()].map(([g, st]) => [g, st] as const),
    ] as const)
      for (const { roles, st } of onSecretsKey(stack)) {
        expect(st.Effect).toBe("Allow");
        // The export group seals destinations' credentials; the export partition task (task role) opens them.
        const sealOnly = name === "export";
        expect(actionsOf(st).sort()).toEqual(
          sealOnly ? ["kms:GenerateDataKey"] : ["kms:Decrypt", "kms:GenerateDataKey"],
        );
        expect(st.Condition).toEqual({ Null: { "kms:EncryptionContext:tenant_id": "false" } });
        grantees.push(...roles.map((r: string) => `${name}:${r.replace(/[0-9A-F]{8}$/, "")}`));
      }
    expect(grantees.sort()).toEqual([
      "control:Role",
      "export:Role",
      "workflows:DeployRole",
      "workflows:TaskRole",
    ]);
    // The build project's role, the platform, agent and system groups get nothing of it.
    expect(
      onSecretsKey(s.workflows)
        .flatMap((x) => x.roles)
        .some((r: string) => /RevisionBuild/.test(r)),
    ).toBe(false);
  });
});
