import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { LambdaIntegration, RestApi } from "aws-cdk-lib/aws-apigateway";
import { Code, Function as LambdaFunction, Runtime } from "aws-cdk-lib/aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { routes, servedByRuntime } from "../../functions/routes.ts";
import { STATE_MACHINE_DIR } from "../stacks/node-function.ts";
import { renderAsl } from "../state-machines/render.ts";
import { type CfnResource, loadTemplates, type SynthTemplate } from "./cfn-render.ts";
import type { QuotaRow } from "./quota-row.ts";
import { assemblyQuotaRows, synthAccountless } from "./synth.ts";
import { templateQuotaRows } from "./template-checks.ts";
import { workflowBounds } from "./workflow-bounds.ts";

const failing = (rows: QuotaRow[]) => rows.filter((r) => !r.ok);
const template = (resources: Record<string, CfnResource>, name = "T"): SynthTemplate => ({
  name,
  template: { Resources: resources },
  bytes: JSON.stringify({ Resources: resources }).length,
});
const rowsOf = (resources: Record<string, CfnResource>, check: string) =>
  templateQuotaRows([template(resources)], { workflows: workflowBounds() }).filter((r) => r.check === check);

describe("the synthesized app is within AWS's quotas", () => {
  let rows: QuotaRow[] = [];
  let dir = "";
  beforeAll(async () => {
    dir = await synthAccountless();
    rows = assemblyQuotaRows(dir);
  }, 240_000);

  it("every quota row of every stack and nested stack is within its limit", () => {
    expect(failing(rows)).toEqual([]);
    expect(new Set(rows.map((r) => r.check))).toEqual(
      new Set([
        "Lambda resource-based policy (bytes)",
        "Lambda environment variables (bytes)",
        "IAM role inline policies (characters)",
        "IAM managed policy (characters)",
        "CloudFormation resources per stack",
        "CloudFormation template size (bytes)",
        "REST API resources per API",
        "HTTP API routes per API",
        "HTTP API integrations per API",
        "Distributed Map MaxConcurrency",
        "Step Functions history events (worst case)",
      ]),
    );
  });

  it("checks every function, role, stack and state machine the templates hold", () => {
    const templates = loadTemplates(dir);
    const count = (type: string) =>
      templates.flatMap((t) => Object.values(t.template.Resources ?? {})).filter((r) => r.Type === type)
        .length;
    const of = (check: string) => rows.filter((r) => r.check === check).length;
    expect(of("Lambda environment variables (bytes)")).toBe(count("AWS::Lambda::Function"));
    expect(of("IAM role inline policies (characters)")).toBe(count("AWS::IAM::Role"));
    expect(of("CloudFormation resources per stack")).toBe(templates.length);
    expect(templates.some((t) => t.name.endsWith(".nested"))).toBe(true);
    // The bulk export machine and each of its child executions; the revision machine.
    expect(of("Step Functions history events (worst case)")).toBe(3);
  });

  it("the bulk export's child executions may be started and watched by its own role, nothing wider", () => {
    const wf = loadTemplates(dir).find((t) => t.name === "AgentPlatformWorkflows")!;
    const resources = Object.values(wf.template.Resources ?? {});
    const machine = resources.find(
      (r) =>
        r.Type === "AWS::StepFunctions::StateMachine" &&
        r.Properties?.StateMachineName === "agent-platform-bulk-export",
    )!;
    const role = (machine.Properties!.RoleArn as { "Fn::GetAtt": string[] })["Fn::GetAtt"][0];
    const statements = resources
      .filter(
        (r) =>
          r.Type === "AWS::IAM::Policy" &&
          (r.Properties!.Roles as { Ref: string }[]).some((x) => x.Ref === role),
      )
      .flatMap(
        (r) =>
          (r.Properties!.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
            .Statement,
      );
    const on = (action: string) =>
      JSON.stringify(statements.filter((s) => [s.Action].flat().includes(action)).map((s) => s.Resource));
    expect(on("states:StartExecution")).toMatch(/stateMachine:agent-platform-bulk-export"/);
    expect(on("states:DescribeExecution")).toMatch(/execution:agent-platform-bulk-export\/\*"/);
    expect(on("states:StopExecution")).toMatch(/execution:agent-platform-bulk-export\/\*"/);
  });
});

describe("each check fails where AWS would refuse", () => {
  it("the resource-policy check fails the old router: a permission per runtime-served method (issue 26, finding 1)", () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), "cdk-old-router-")) });
    const stack = new Stack(app, "OldRouter");
    const router = new LambdaFunction(stack, "AgentRouter", {
      runtime: Runtime.NODEJS_22_X,
      handler: "index.handler",
      code: Code.fromInline("exports.handler = async () => ({})"),
    });
    const api = new RestApi(stack, "AgentApi");
    const served = routes.filter(servedByRuntime);
    expect(served.length).toBeGreaterThanOrEqual(60);
    // As 8709dd0's api-stack did: one integration per method, scopePermissionToMethod left at its default (true).
    for (const route of served)
      api.root
        .resourceForPath(route.path)
        .addMethod(route.method, new LambdaIntegration(router, { proxy: true, allowTestInvoke: false }));
    const rows = templateQuotaRows(loadTemplates(app.synth().directory)).filter(
      (r) => r.check === "Lambda resource-based policy (bytes)",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].ok).toBe(false);
    expect(rows[0].value).toBeGreaterThan(20_480);
  });

  it("the history check fails the bulk export's old inline Map; its concurrency check fails 45 > 40", () => {
    const asl = JSON.parse(renderAsl(readFileSync(join(STATE_MACHINE_DIR, "bulk-export.asl.json"), "utf8")));
    asl.States.Runs.ItemProcessor.ProcessorConfig = { Mode: "INLINE" };
    const resources = {
      M: {
        Type: "AWS::StepFunctions::StateMachine",
        Properties: { StateMachineName: "bulk-export", DefinitionString: JSON.stringify(asl) },
      },
    };
    const [history] = rowsOf(resources, "Step Functions history events (worst case)");
    expect(history).toMatchObject({ subject: "bulk-export", ok: false });
    expect(history.value).toBeGreaterThan(25_000);
    expect(rowsOf(resources, "Inline Map MaxConcurrency")).toMatchObject([
      { value: 45, limit: 40, ok: false },
    ]);
  });

  it("a loop or a Map no config bounds is unbounded, and fails", () => {
    const asl = {
      StartAt: "Poll",
      States: {
        Poll: { Type: "Task", Resource: "arn:aws:lambda:us-east-1:1:function:f", Next: "Done?" },
        "Done?": {
          Type: "Choice",
          Choices: [{ Variable: "$.done", BooleanEquals: true, Next: "End" }],
          Default: "Poll",
        },
        End: { Type: "Succeed" },
      },
    };
    const resources = {
      M: {
        Type: "AWS::StepFunctions::StateMachine",
        Properties: { StateMachineName: "loop", DefinitionString: JSON.stringify(asl) },
      },
    };
    expect(rowsOf(resources, "Step Functions history events (worst case)")).toMatchObject([
      { value: Number.POSITIVE_INFINITY, ok: false },
    ]);
  });

  it("environment, role, managed policy, stack, REST and HTTP API checks fail past their limits", () => {
    const fn = {
      Type: "AWS::Lambda::Function",
      Properties: { Environment: { Variables: { BIG: "x".repeat(4_100) } } },
    };
    expect(rowsOf({ F: fn }, "Lambda environment variables (bytes)")).toMatchObject([{ ok: false }]);

    const statement = (n: number) => ({
      Effect: "Allow",
      Action: "s3:GetObject",
      Resource: `arn:aws:s3:::${"b".repeat(n)}`,
    });
    const role = { Type: "AWS::IAM::Role", Properties: {} };
    const inline = {
      Type: "AWS::IAM::Policy",
      Properties: {
        Roles: [{ Ref: "R" }],
        PolicyDocument: { Statement: [statement(5_100), statement(5_100)] },
      },
    };
    expect(rowsOf({ R: role, P: inline }, "IAM role inline policies (characters)")).toMatchObject([
      { ok: false },
    ]);
    const managed = {
      Type: "AWS::IAM::ManagedPolicy",
      Properties: { PolicyDocument: { Statement: [statement(6_200)] } },
    };
    expect(rowsOf({ M: managed }, "IAM managed policy (characters)")).toMatchObject([{ ok: false }]);

    const many = Object.fromEntries(
      Array.from({ length: 501 }, (_, i) => [`Q${i}`, { Type: "AWS::SQS::Queue" }]),
    );
    expect(rowsOf(many, "CloudFormation resources per stack")).toMatchObject([{ value: 501, ok: false }]);

    const rest: Record<string, CfnResource> = { A: { Type: "AWS::ApiGateway::RestApi" } };
    for (let i = 0; i < 300; i++)
      rest[`R${i}`] = { Type: "AWS::ApiGateway::Resource", Properties: { RestApiId: { Ref: "A" } } };
    expect(rowsOf(rest, "REST API resources per API")).toMatchObject([{ value: 301, ok: false }]);

    const http: Record<string, CfnResource> = { H: { Type: "AWS::ApiGatewayV2::Api" } };
    for (let i = 0; i < 301; i++)
      http[`R${i}`] = { Type: "AWS::ApiGatewayV2::Route", Properties: { ApiId: { Ref: "H" } } };
    expect(rowsOf(http, "HTTP API routes per API")).toMatchObject([{ value: 301, ok: false }]);
  });
});
