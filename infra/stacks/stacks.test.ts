import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, type CfnElement, type NestedStack, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { mountedRoutes, type Route, routes } from "../../functions/routes.ts";
import { type TaskFunction, tasks } from "../../functions/tasks.ts";
import { TABLES, type TableDef, tableEnvName } from "../../shared/tables.ts";
import { type BuildOptions, buildApp, type PlatformStacks } from "./index.ts";
import { ROOT } from "./node-function.ts";

// Same feature flags as `cdk synth`, but NodejsFunction bundling skipped (placeholder assets) for speed.
const context = {
  ...JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context,
  "aws:cdk:bundling-stacks": [],
};

function build(options?: BuildOptions): { app: App; stacks: PlatformStacks } {
  const app = new App({ context, outdir: mkdtempSync(join(tmpdir(), "cdk-test-")) });
  const stacks = buildApp(app, options);
  // References between stacks are resolved at synthesis; cdk-nag must see the resolved templates.
  app.synth();
  return { app, stacks };
}

function allStacks(app: App): Stack[] {
  return app.node.findAll().filter((c): c is Stack => Stack.isStack(c));
}

const templates = (stacks: Stack[]) => stacks.map((s) => Template.fromStack(s));

function resourcesOf(stacks: Stack[], type: string): Record<string, any>[] {
  return templates(stacks).flatMap((t) => Object.values(t.findResources(type)));
}

/** AwsSolutions violations (errors and warnings both fail `cdk synth`), as "rule at path" lines. */
function nagViolations(app: App): string[] {
  const report = new AwsSolutionsChecks().validateScope(app);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`),
  );
}

function apiFunctions(stacks: Stack[]) {
  return resourcesOf(stacks, "AWS::Lambda::Function").filter(
    (f) => f.Properties.Runtime === "nodejs22.x" && f.Properties.Handler === "index.handler",
  );
}

describe("platform stacks (manifest as it is)", () => {
  let app: App;
  let s: PlatformStacks;
  let groups: NestedStack[];
  beforeAll(() => {
    ({ app, stacks: s } = build());
    groups = [...s.api.groups.values()];
  });

  it("has one Lambda per route and per task", () => {
    expect(apiFunctions(groups)).toHaveLength(routes.length);
    expect(apiFunctions([s.workflows])).toHaveLength(tasks.length);
    for (const f of apiFunctions(groups)) {
      expect(f.Properties).toMatchObject({ Architectures: ["arm64"], MemorySize: 512, Timeout: 29 });
      expect(f.Properties.LoggingConfig.LogGroup).toBeDefined();
    }
  });

  it("puts every group in its own nested stack, under 500 resources each", () => {
    expect(groups.map((g) => g.node.id).sort()).toEqual(
      [...new Set(routes.map((r) => `Group-${r.group}`))].sort(),
    );
    for (const stack of allStacks(app)) {
      const count = Object.keys(Template.fromStack(stack).toJSON().Resources ?? {}).length;
      expect(count, stack.node.path).toBeLessThan(500);
    }
  });

  it("has one HttpRoute per mounted path, /api-host twins included", () => {
    const keys = resourcesOf(groups, "AWS::ApiGatewayV2::Route").map((r) => r.Properties.RouteKey);
    expect(keys).toHaveLength(mountedRoutes().length);
    expect(keys.sort()).toEqual(
      mountedRoutes()
        .map((m) => m.routeKey)
        .sort(),
    );
  });

  it("gives handlers the data, workflow and runtime environment", () => {
    const wanted = [
      ...Object.keys(TABLES).map((id) => tableEnvName(id as keyof typeof TABLES)),
      "KMS_KEY_ID",
      "PLATFORM_BUCKET",
      "SCHEDULER_ROLE_ARN",
      "SCHEDULER_GROUP",
    ];
    for (const f of apiFunctions(groups)) {
      const env = f.Properties.Environment.Variables;
      expect(Object.keys(env)).toEqual(expect.arrayContaining(wanted));
      expect(env).toMatchObject({ NODE_OPTIONS: "--enable-source-maps", LOG_LEVEL: "info" });
    }
  });

  it("lets the platform group queue the project-run purge, and only that task", () => {
    const t = Template.fromStack(s.api.groups.get("platform")!);
    t.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: "lambda:InvokeFunction",
            Resource: {
              "Fn::Join": [
                "",
                Match.arrayWith([Match.stringLikeRegexp(":function:agent-platform-PurgeProjectRuns$")]),
              ],
            },
          }),
        ]),
      },
    });
  });

  it("keeps workflow and schedule permissions to the control and export groups", () => {
    for (const group of groups.filter((g) => !["Group-control", "Group-export"].includes(g.node.id))) {
      const actions = JSON.stringify(resourcesOf([group], "AWS::IAM::Policy"));
      expect(actions, group.node.id).not.toMatch(/"(states|scheduler|iam):/);
    }
  });

  it("logs API access", () => {
    Template.fromStack(s.api).hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp("requestId") },
    });
  });

  it.each(Object.values(TABLES) as TableDef[])("creates table $id as defined", (def) => {
    const key = (pk: string, sk?: string) => [
      { AttributeName: pk, KeyType: "HASH" },
      ...(sk ? [{ AttributeName: sk, KeyType: "RANGE" }] : []),
    ];
    const table = s.data.tables[def.id as keyof typeof TABLES];
    const id = s.data.getLogicalId(table.node.defaultChild as CfnElement);
    const resource = Template.fromStack(s.data).toJSON().Resources[id];
    expect(resource.DeletionPolicy).toBe("Retain");
    expect(resource.Properties).toMatchObject({
      KeySchema: key(def.partitionKey, def.sortKey),
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true, SSEType: "KMS", KMSMasterKeyId: expect.anything() },
    });
    expect(resource.Properties.GlobalSecondaryIndexes ?? []).toEqual(
      (def.indexes ?? []).map((i) => ({
        IndexName: i.name,
        KeySchema: key(i.partitionKey, i.sortKey),
        Projection: { ProjectionType: "ALL" },
      })),
    );
    expect(resource.Properties.TimeToLiveSpecification).toEqual(
      def.ttlAttribute ? { AttributeName: def.ttlAttribute, Enabled: true } : undefined,
    );
  });

  it("locks down the buckets and rotates the key", () => {
    const data = Template.fromStack(s.data);
    const buckets = Object.values(data.findResources("AWS::S3::Bucket"));
    expect(buckets).toHaveLength(2);
    for (const b of buckets) {
      expect(b.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(b.Properties.VersioningConfiguration).toEqual({ Status: "Enabled" });
      expect(b.Properties.BucketEncryption).toBeDefined();
    }
    data.hasResourceProperties("AWS::S3::Bucket", {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: "aws:kms" }) }),
        ],
      },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
    });
    data.resourceCountIs("AWS::S3::BucketPolicy", 2);
    data.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
    data.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    data.hasResourceProperties("AWS::KMS::Alias", { AliasName: "alias/agent-platform" });
  });

  it("creates the schedule group and the scheduler role", () => {
    const wf = Template.fromStack(s.workflows);
    wf.hasResourceProperties("AWS::Scheduler::ScheduleGroup", { Name: "agent-platform" });
    wf.hasResourceProperties("AWS::IAM::Role", {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: "scheduler.amazonaws.com" } })],
      },
    });
  });

  it("deploys the bulk export machine from its ASL: Map with concurrency from the plan, 30 s × 20 fixed retries", () => {
    const wf = Template.fromStack(s.workflows);
    const machine = Object.values(wf.findResources("AWS::StepFunctions::StateMachine")).find(
      (m: any) => m.Properties.StateMachineName === "agent-platform-bulk-export",
    ) as any;
    expect(machine).toBeDefined();
    expect(Object.keys(machine.Properties.DefinitionSubstitutions).sort()).toEqual([
      "ExportFinalizeFunctionArn",
      "ExportPartitionFunctionArn",
      "ExportPlanFunctionArn",
    ]);
    const asl = JSON.parse(readFileSync(join(ROOT, "infra/state-machines/bulk-export.asl.json"), "utf8"));
    expect(asl.TimeoutSeconds).toBe(72 * 3600);
    expect(asl.States.Runs).toMatchObject({ Type: "Map", MaxConcurrencyPath: "$.plan.max_concurrency" });
    const partition = asl.States.Runs.ItemProcessor.States.ExportPartition;
    expect(partition.Retry).toEqual([
      { ErrorEquals: ["DestinationError", "ExportTimedOut", "RetriesExhausted"], MaxAttempts: 0 },
      { ErrorEquals: ["States.ALL"], IntervalSeconds: 30, MaxAttempts: 20, BackoffRate: 1 },
    ]);
  });

  it("names task functions, routes ended executions to ExportExecutionEnded and sweeps every 5 minutes", () => {
    const wf = Template.fromStack(s.workflows);
    const names = apiFunctions([s.workflows])
      .map((f) => f.Properties.FunctionName)
      .sort();
    expect(names).toEqual(tasks.map((t) => `agent-platform-${t.name}`).sort());
    wf.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["aws.states"],
        "detail-type": ["Step Functions Execution Status Change"],
        detail: { status: ["FAILED", "TIMED_OUT", "ABORTED"], stateMachineArn: Match.anyValue() },
      },
    });
    wf.hasResourceProperties("AWS::Scheduler::Schedule", {
      ScheduleExpression: "rate(5 minutes)",
      GroupName: "agent-platform",
    });
    for (const f of apiFunctions([s.workflows]))
      expect(Object.keys(f.Properties.Environment.Variables)).toEqual(
        expect.arrayContaining(["STATE_MACHINE_BULK_EXPORT_ARN", "TASK_ARN_PREFIX", "SCHEDULER_ROLE_ARN"]),
      );
    const exportGroup = Template.fromStack(s.api.groups.get("export")!);
    exportGroup.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ STATE_MACHINE_BULK_EXPORT_ARN: Match.anyValue() }) },
    });
  });

  it("passes cdk-nag AwsSolutions with no unacknowledged finding", () => {
    expect(nagViolations(app)).toEqual([]);
    // cdk-nag 3 reports through the validation plugin above, not annotations; still, no construct anywhere
    // (nested stacks included) may carry an error annotation. Walking metadata avoids one re-synth per stack.
    const errors = app.node
      .findAll()
      .flatMap((c: IConstruct) => c.node.metadata.filter((m) => m.type === "aws:cdk:error"));
    expect(errors).toEqual([]);
  });
});

describe("workflows", () => {
  const sampleTasks: TaskFunction[] = [
    { name: "Plan", handler: "system/ok", timeoutSeconds: 120 },
    { name: "Write", handler: "system/ok", timeoutSeconds: 900, memoryMb: 1024 },
  ];
  const aslDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "asl-"));
    const task = (fn: string, next?: string) => ({
      Type: "Task",
      Resource: `\${${fn}FunctionArn}`,
      ...(next ? { Next: next } : { End: true }),
    });
    writeFileSync(
      join(dir, "bulk-export.asl.json"),
      JSON.stringify({ StartAt: "Plan", States: { Plan: task("Plan", "Write"), Write: task("Write") } }),
    );
    return dir;
  };
  let app: App;
  let s: PlatformStacks;
  beforeAll(() => {
    // One control-plane route is enough to check what orchestrating handlers get; it keeps this build small.
    const control: Route = {
      ...routes[0],
      method: "POST",
      path: "/v1/exports",
      group: "control",
      auth: true,
    };
    ({ app, stacks: s } = build({ tasks: sampleTasks, stateMachineDir: aslDir(), routes: [control] }));
  });

  it("builds task functions and a logged, traced, alarmed state machine", () => {
    const wf = Template.fromStack(s.workflows);
    expect(
      apiFunctions([s.workflows])
        .map((f) => f.Properties.Timeout)
        .sort(),
    ).toEqual([120, 900]);
    const machine = Object.values(wf.findResources("AWS::StepFunctions::StateMachine"))[0];
    expect(machine.Properties).toMatchObject({
      StateMachineName: "agent-platform-bulk-export",
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: "ALL", IncludeExecutionData: true },
    });
    expect(Object.keys(machine.Properties.DefinitionSubstitutions).sort()).toEqual([
      "PlanFunctionArn",
      "WriteFunctionArn",
    ]);
    wf.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ExecutionsFailed",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
  });

  it("lets the control plane start executions and gives it the machine ARN", () => {
    const t = Template.fromStack(s.api.groups.get("control")!);
    t.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: "states:StartExecution" })]),
      },
    });
    t.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: Match.arrayWith(["scheduler:CreateSchedule", "scheduler:DeleteSchedule"]),
          }),
          Match.objectLike({
            Action: "iam:PassRole",
            Condition: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
          }),
        ]),
      },
    });
    t.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ STATE_MACHINE_BULK_EXPORT_ARN: Match.anyValue() }) },
    });
  });

  it("still passes cdk-nag", () => {
    expect(nagViolations(app)).toEqual([]);
  });

  it("fails synth clearly when a placeholder has no task", () => {
    const app2 = new App({ context, outdir: mkdtempSync(join(tmpdir(), "cdk-test-")) });
    expect(() => buildApp(app2, { tasks: [], stateMachineDir: aslDir() })).toThrow(
      /bulk-export\.asl\.json uses \$\{PlanFunctionArn\}, but functions\/tasks\.ts has no task named "Plan"/,
    );
  });

  it("synthesizes with no ASL files and no tasks (schedule group and role only)", () => {
    const { stacks } = build({ tasks: [], stateMachineDir: join(tmpdir(), "no-such-dir"), routes: [] });
    const counts = Object.values(Template.fromStack(stacks.workflows).toJSON().Resources).map(
      (r: any) => r.Type,
    );
    expect(counts.sort()).toEqual(["AWS::IAM::Role", "AWS::Scheduler::ScheduleGroup"]);
  });
});
