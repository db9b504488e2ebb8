import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, type CfnElement, type NestedStack, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { CachePolicy, OriginRequestPolicy } from "aws-cdk-lib/aws-cloudfront";
import { type CfnFunction, Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { mountedRoutes, type Route, routes, servedByRuntime } from "../../functions/routes.ts";
import { type TaskFunction, tasks } from "../../functions/task-manifest.ts";
import { NODE_VERSIONS } from "../../shared/build/graph-config.ts";
import { projectionOf, TABLES, type TableDef, tableEnvName } from "../../shared/tables.ts";
import { platformFunctions } from "../build/function-bundles.ts";
import { BUILD_SCRIPT, SOURCE_SCRIPT } from "../build/step-bundle.ts";
import { buildConsole, CONSOLE_DIST } from "../console/build.mjs";
import { consoleCsp } from "../local/console-files.ts";
import {
  AGENT_ORIGIN_CONTEXT,
  AGENT_STAGE,
  agentOriginSettings,
  GATEWAY_THROTTLE_RETRY_AFTER_SECONDS,
} from "./agent-origin.ts";
import { REST_GROUPS } from "./api-stack.ts";
import { apiPathPatterns, CONSOLE_FILES } from "./console-stack.ts";
import { type BuildOptions, buildApp, type PlatformStacks } from "./index.ts";
import { ROOT } from "./node-function.ts";
import { BUILD_DEPENDENCIES, BUILD_PROJECT_NAME, bundleBuildStep } from "./revision-build.ts";
import { parameterName } from "./stack-parameters.ts";
import { synthesizedApp } from "./synthesized-app.ts";
import { placeholdersOf } from "./workflows-stack.ts";

// Same feature flags as `cdk synth`; functions deploy the cached bundles of infra/build/function-bundles.ts.
// Every build deploys console/dist (a no-op when console/src is unchanged since the last build).
beforeAll(() => buildConsole(), 120_000);

const context = JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context;

function build(
  options?: BuildOptions,
  settings: Record<string, string> = {},
): { app: App; stacks: PlatformStacks } {
  const app = new App({
    context: { ...context, ...settings },
    outdir: mkdtempSync(join(tmpdir(), "cdk-test-")),
  });
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

const logicalId = (c: IConstruct) => Stack.of(c).getLogicalId(c.node.defaultChild as CfnElement);

/** Every statement of the policies attached to a role of `stack`. */
function statementsOf(stack: Stack, roleLogicalId: string): any[] {
  return Object.values(Template.fromStack(stack).findResources("AWS::IAM::Policy"))
    .filter((p) => p.Properties.Roles.some((r: any) => r.Ref === roleLogicalId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}

const actionsOf = (st: any): string[] => [st.Action].flat();

describe("platform stacks (manifest as it is)", () => {
  let app: App;
  let s: PlatformStacks;
  let groups: NestedStack[];
  // Synthesizing one function per route takes seconds on its own; the unit project's default hook timeout is 10 s.
  beforeAll(async () => {
    ({ app, stacks: s } = await synthesizedApp());
    groups = [...s.api.groups.values()];
  }, 120_000);

  it("gives each function the memory and timeout platformFunctions() tells the local cloud", () => {
    const deployed = new Map(
      app.node
        .findAll()
        .filter((c): c is LambdaFunction => c instanceof LambdaFunction)
        .map((f) => [f.node.id, f.node.defaultChild as CfnFunction]),
    );
    const mismatched = platformFunctions()
      .filter((f) => f.kind !== "runtime")
      .filter((f) => {
        const cfn = deployed.get(f.id);
        return cfn?.memorySize !== f.memoryMb || cfn?.timeout !== f.timeoutSeconds;
      })
      .map((f) => f.id);
    expect(mismatched).toEqual([]);
  });

  it("has one Lambda per route and per task; runtime-served routes share the agent router", () => {
    const runtimeServed = routes.filter(servedByRuntime).length;
    expect(apiFunctions(groups)).toHaveLength(routes.length - runtimeServed + 1);
    expect(apiFunctions([s.workflows])).toHaveLength(tasks.length);
    for (const f of apiFunctions(groups)) {
      const streaming =
        f.Properties.Environment.Variables.LAMBDA_RESPONSE_STREAMING === "1" ||
        String(f.Properties.Description).includes("Routes agent-server requests");
      expect(f.Properties).toMatchObject({
        Architectures: ["arm64"],
        MemorySize: 512,
        Timeout: streaming ? 900 : 29,
      });
      expect(f.Properties.LoggingConfig.LogGroup).toBeDefined();
    }
    // Streamed routes are all runtime-served: the router streams them (no per-route streaming function).
    expect(
      apiFunctions(groups).filter((f) => f.Properties.Environment.Variables.LAMBDA_RESPONSE_STREAMING),
    ).toHaveLength(routes.filter((r) => r.stream && !(r.group === "agent" && r.auth)).length);
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

  it("has one HttpRoute per mounted path, /api-host twins included, the agent routes aside", () => {
    const http = mountedRoutes().filter((m) => !REST_GROUPS.has(m.group));
    const keys = resourcesOf(groups, "AWS::ApiGatewayV2::Route").map((r) => r.Properties.RouteKey);
    expect(keys).toHaveLength(http.length);
    expect(keys.sort()).toEqual(http.map((m) => m.routeKey).sort());
  });

  it("serves the agent server from a REST API, one method per route, runtime routes streamed", () => {
    const agent = s.api.groups.get("agent")!;
    const t = Template.fromStack(agent);
    const agentRoutes = routes.filter((r) => r.group === "agent");
    const methods = Object.values(t.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.HttpMethod !== "OPTIONS",
    );
    expect(methods).toHaveLength(agentRoutes.length);
    const streamed = methods.filter((m) => m.Properties.Integration.ResponseTransferMode === "STREAM");
    // Every route a runtime serves is streamed through the router (SSE among them).
    expect(streamed).toHaveLength(agentRoutes.filter(servedByRuntime).length);
    expect(streamed.length).toBeGreaterThanOrEqual(3);
    for (const m of methods) expect(m.Properties.Integration.Type).toBe("AWS_PROXY");
    // Streamed integrations invoke with InvokeWithResponseStream (the /response-streaming-invocations URI).
    for (const m of streamed)
      expect(JSON.stringify(m.Properties.Integration.Uri)).toContain("response-streaming-invocations");
    t.hasResourceProperties("AWS::ApiGateway::Stage", {
      StageName: AGENT_STAGE,
      MethodSettings: Match.arrayWith([Match.objectLike({ LoggingLevel: "ERROR" })]),
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
    // Issue 35: UI fonts and images, and every base64 answer, go out as bytes; a request body comes base64.
    t.hasResourceProperties("AWS::ApiGateway::RestApi", { BinaryMediaTypes: ["*/*"] });
    // The account's CloudWatch role for API Gateway is the operator's (docs/aws.md): not set by the app.
    expect(t.findResources("AWS::ApiGateway::Account")).toEqual({});
    expect(Template.fromStack(s.api).findOutputs("AgentApiUrl")).not.toEqual({});
  });

  it("sends every other agent-server path (custom routes, http.app) to the router: ANY on a greedy {proxy+}", () => {
    const t = Template.fromStack(s.api.groups.get("agent")!);
    const resources = t.findResources("AWS::ApiGateway::Resource");
    const proxy = Object.entries(resources).filter(([, r]) => r.Properties.PathPart === "{proxy+}");
    expect(proxy).toHaveLength(1);
    const [proxyId, proxyResource] = proxy[0]!;
    // Directly under /agents/{deployment_id}: the more specific built-in resources beside it win.
    const parent = resources[proxyResource.Properties.ParentId.Ref];
    expect(parent?.Properties.PathPart).toBe("{deployment_id}");
    const on = Object.values(t.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.ResourceId.Ref === proxyId,
    );
    expect(on.map((m) => m.Properties.HttpMethod).sort()).toEqual(["ANY", "OPTIONS"]);
    const any = on.find((m) => m.Properties.HttpMethod === "ANY")!;
    expect(any.Properties.Integration).toMatchObject({ Type: "AWS_PROXY", ResponseTransferMode: "STREAM" });
    const [routerId] = Object.entries(t.findResources("AWS::Lambda::Function")).find(([, f]) =>
      String(f.Properties.Description).includes("Routes agent-server requests"),
    )!;
    expect(JSON.stringify(any.Properties.Integration.Uri)).toContain(routerId);
  });

  it("routes every runtime-served agent route through one streaming router; runtimes are managed by pattern only", () => {
    const agent = s.api.groups.get("agent")!;
    const t = Template.fromStack(agent);
    const router = Object.entries(t.findResources("AWS::Lambda::Function")).find(([, f]) =>
      String(f.Properties.Description).includes("Routes agent-server requests"),
    );
    expect(router).toBeDefined();
    const methods = Object.values(t.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.HttpMethod !== "OPTIONS",
    );
    const runtimeRoutes = routes.filter(servedByRuntime);
    const viaRouter = methods.filter((m) => JSON.stringify(m.Properties.Integration).includes(router![0]));
    expect(viaRouter).toHaveLength(runtimeRoutes.length);
    for (const m of viaRouter) expect(m.Properties.Integration.ResponseTransferMode).toBe("STREAM");
    const statements = (stack: Stack) =>
      Object.values(Template.fromStack(stack).findResources("AWS::IAM::Policy")).flatMap(
        (p) => p.Properties.PolicyDocument.Statement,
      );
    const touching = (stack: Stack, prefix: string) =>
      statements(stack).filter((st: any) => actionsOf(st).some((a: string) => a.startsWith(prefix)));
    // The router may invoke runtimes (requests, and the drains their answers ask for), nothing more of Lambda.
    for (const st of touching(agent, "lambda:")) {
      expect(actionsOf(st)).toEqual(["lambda:InvokeFunction"]);
      expect(JSON.stringify(st.Resource)).toContain("agent-rt-*");
    }
    // The tasks (deploy step) manage runtime functions and roles under their patterns only, and pass those
    // roles to Lambda only.
    const iamStatements = touching(s.workflows, "iam:").filter(
      (st: any) =>
        !actionsOf(st).includes("iam:PassRole") || JSON.stringify(st.Resource).includes("agent-runtime"),
    );
    expect(iamStatements.length).toBeGreaterThan(0);
    for (const st of touching(s.workflows, "iam:").filter((x: any) => x.Effect === "Allow")) {
      const resource = JSON.stringify(st.Resource);
      if (actionsOf(st).includes("iam:PassRole") && resource.includes("SchedulerRole")) continue;
      // Issue 35: GetRole alone also by the path-less ARN IAM checks a role that does not exist yet against.
      if (actionsOf(st).join() === "iam:GetRole" && resource.includes(":role/agent-rt-*")) continue;
      expect(resource).toContain("agent-runtime/agent-rt-*");
      if (actionsOf(st).includes("iam:PassRole"))
        expect(st.Condition.StringEquals["iam:PassedToService"]).toBe("lambda.amazonaws.com");
    }
    for (const st of touching(s.workflows, "lambda:").filter((x: any) =>
      actionsOf(x).includes("lambda:CreateFunction"),
    ))
      expect(JSON.stringify(st.Resource)).toContain("agent-rt-*");
    // The runtime layer exists, and the deploy step is told about it and the account's runtime scope.
    Template.fromStack(s.workflows).resourceCountIs("AWS::Lambda::LayerVersion", 1);
    // It serves every Node.js runtime the deploy step gives a function (langgraph.json node_version).
    Template.fromStack(s.workflows).hasResourceProperties("AWS::Lambda::LayerVersion", {
      CompatibleRuntimes: NODE_VERSIONS.map((v) => `nodejs${v}.x`),
      CompatibleArchitectures: ["arm64"],
    });
    const deployFn = apiFunctions([s.workflows]).find((f) =>
      String(f.Properties.Description).includes("RevisionDeploy"),
    )!;
    expect(Object.keys(deployFn.Properties.Environment.Variables)).toEqual(
      expect.arrayContaining(["AGENT_RUNTIME_LAYER_ARN", "PLATFORM_RUNTIME_SCOPE", "AGENT_TRACE_FUNCTION"]),
    );
    // No platform function executes runs any more.
    for (const f of [...apiFunctions(groups), ...apiFunctions([s.workflows])])
      expect(f.Properties.Environment.Variables.AGENT_RUN_WORKER).toBeUndefined();
    Template.fromStack(s.workflows).hasResourceProperties("AWS::Scheduler::Schedule", {
      ScheduleExpression: "rate(1 minute)",
    });
  });

  it("answers CORS preflights without an API key: agent paths through the router, the HTTP API by API Gateway", () => {
    const agent = s.api.groups.get("agent")!;
    const t = Template.fromStack(agent);
    const [routerId] = Object.entries(t.findResources("AWS::Lambda::Function")).find(([, f]) =>
      String(f.Properties.Description).includes("Routes agent-server requests"),
    )!;
    const resources = t.findResources("AWS::ApiGateway::Resource");
    const methods = Object.values(t.findResources("AWS::ApiGateway::Method"));
    const options = methods.filter((m) => m.Properties.HttpMethod === "OPTIONS");
    // One OPTIONS per agent-server path (public ones too), each to the router, streamed, with no authorizer.
    const paths = new Set(routes.filter((r) => r.group === "agent").map((r) => r.path));
    expect(options).toHaveLength(paths.size);
    for (const m of options) {
      expect(m.Properties.AuthorizationType).toBe("NONE");
      expect(m.Properties.Integration).toMatchObject({ Type: "AWS_PROXY", ResponseTransferMode: "STREAM" });
      expect(JSON.stringify(m.Properties.Integration.Uri)).toContain(routerId);
    }
    // Every path with a method has its OPTIONS.
    const withOptions = new Set(options.map((m) => JSON.stringify(m.Properties.ResourceId)));
    for (const m of methods) expect(withOptions).toContain(JSON.stringify(m.Properties.ResourceId));
    expect(Object.keys(resources).length).toBeGreaterThanOrEqual(paths.size);
    // The router's permission for preflights covers the API once, not one statement per method.
    const permissions = Object.values(t.findResources("AWS::Lambda::Permission")).filter((p) =>
      JSON.stringify(p.Properties.FunctionName).includes(routerId),
    );
    expect(permissions.filter((p) => JSON.stringify(p.Properties.SourceArn).includes("/*/*/*"))).toHaveLength(
      1,
    );
    // And so do its other methods: a function's resource policy holds at most 20,480 bytes (Lambda quotas,
    // https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html); a statement per method (63 of
    // them, ~370 bytes each once resolved) came to more than that, and the first deploy failed.
    expect(permissions).toHaveLength(1);
    // API Gateway's own errors are readable by a browser.
    for (const type of ["DEFAULT_4XX", "DEFAULT_5XX"])
      t.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
        ResponseType: type,
        ResponseParameters: Match.objectLike({
          "gatewayresponse.header.Access-Control-Allow-Origin": "'*'",
          "gatewayresponse.header.Access-Control-Expose-Headers":
            "'content-location,x-pagination-total,retry-after'",
        }),
      });
    // API Gateway's own throttle (the stage's rate and burst, or the account's) is a 429 saying when to retry,
    // readable by a browser too: THROTTLED is its gateway response type (default status 429,
    // https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
    t.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
      ResponseType: "THROTTLED",
      StatusCode: "429",
      ResponseParameters: {
        "gatewayresponse.header.Retry-After": `'${GATEWAY_THROTTLE_RETRY_AFTER_SECONDS}'`,
        "gatewayresponse.header.Access-Control-Allow-Origin": "'*'",
        "gatewayresponse.header.Access-Control-Expose-Headers":
          "'content-location,x-pagination-total,retry-after'",
      },
    });
    // The HTTP API (control plane, ingestion, export): API Gateway answers preflights with the defaults.
    Template.fromStack(s.api).hasResourceProperties("AWS::ApiGatewayV2::Api", {
      CorsConfiguration: {
        AllowOrigins: ["*"],
        AllowMethods: ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"],
        AllowHeaders: ["*", "authorization"],
        ExposeHeaders: ["content-location", "x-pagination-total", "retry-after"],
      },
    });
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
      expect(env).toMatchObject({ LOG_LEVEL: "info" });
      // No source maps in the hot path: loading a minified bundle's map cost hundreds of MB of RSS.
      expect(env.NODE_OPTIONS).toBeUndefined();
    }
  });

  it("lets every API group's authenticated handlers, the agent router among them, count requests on the main table", () => {
    // The per-workspace rate limit (shared/auth/rate-limit.ts): GetItem of the workspace, UpdateItem of its window.
    for (const [group, stack] of s.api.groups) {
      // The system group serves public routes only (health, OpenAPI): no workspace, no count, no data grant.
      if (group === "system") continue;
      const roles = Object.keys(Template.fromStack(stack).findResources("AWS::IAM::Role"));
      const statements = roles.flatMap((r) => statementsOf(stack, r));
      const onMain = statements.filter(
        (st) =>
          st.Effect === "Allow" &&
          [st.Resource]
            .flat()
            .some((r: any) => r["Fn::ImportValue"] === "AgentPlatformData:Table-main-Arn") &&
          ["dynamodb:UpdateItem", "dynamodb:GetItem"].every((a) => actionsOf(st).includes(a)),
      );
      expect(onMain.length, group).toBeGreaterThan(0);
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

  it("serves the GitHub webhook receiver without an API key, from a control function that can do its work", () => {
    const control = s.api.groups.get("control")!;
    const t = Template.fromStack(control);
    const [fn] = Object.values(
      t.findResources("AWS::Lambda::Function", {
        Properties: { Description: Match.stringLikeRegexp("^POST /v1/integrations/github/webhook: ") },
      }),
    );
    expect(fn, "the webhook's function").toBeDefined();
    const routeKeys = resourcesOf([control], "AWS::ApiGatewayV2::Route").map((r) => r.Properties);
    const hook = routeKeys.filter((r) => /^POST .*\/v1\/integrations\/github\/webhook$/.test(r.RouteKey));
    expect(hook.map((r) => r.RouteKey).sort()).toEqual([
      "POST /api-host/v1/integrations/github/webhook",
      "POST /v1/integrations/github/webhook",
    ]);
    for (const r of hook) expect(r.AuthorizationType ?? "NONE").toBe("NONE");
    // Unseal the webhook secret, find the integration by id (GSI1), record the delivery, start the revision build.
    const statements = statementsOf(control, fn.Properties.Role["Fn::GetAtt"][0]);
    const actions = statements.flatMap(actionsOf);
    expect(actions).toEqual(
      expect.arrayContaining(["kms:Decrypt", "dynamodb:Query", "dynamodb:PutItem", "states:StartExecution"]),
    );
    expect(JSON.stringify(statements)).toContain("/index/*");
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
        Projection: projectionOf(i),
      })),
    );
    expect(resource.Properties.TimeToLiveSpecification).toEqual(
      def.ttlAttribute ? { AttributeName: def.ttlAttribute, Enabled: true } : undefined,
    );
  });

  it("locks down the buckets and rotates the key", () => {
    const data = Template.fromStack(s.data);
    const buckets = Object.values(data.findResources("AWS::S3::Bucket"));
    expect(buckets).toHaveLength(3);
    for (const b of buckets) {
      expect(b.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(b.Properties.VersioningConfiguration).toEqual({ Status: "Enabled" });
      expect(b.Properties.BucketEncryption).toBeDefined();
      // Multipart uploads a crash left unfinished are dropped after a day, in every bucket of the platform.
      expect(b.Properties.LifecycleConfiguration.Rules).toContainEqual(
        expect.objectContaining({
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: "Enabled",
        }),
      );
    }
    // A build's exchange objects (its job held a token and the deployment's secrets) live a day at most.
    const builds = buckets
      .flatMap((b) => b.Properties.LifecycleConfiguration.Rules)
      .filter((r) => r.Prefix === "builds/");
    expect(builds).toEqual([
      {
        Prefix: "builds/",
        ExpirationInDays: 1,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        Status: "Enabled",
      },
    ]);
    data.hasResourceProperties("AWS::S3::Bucket", {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: "aws:kms" }) }),
        ],
      },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
    });
    data.resourceCountIs("AWS::S3::BucketPolicy", 3);
    const artifacts = Template.fromStack(s.data).toJSON().Resources[logicalId(s.data.artifactBucket)];
    expect(artifacts.DeletionPolicy).toBe("Retain");
    expect(artifacts.Properties).toMatchObject({
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: "aws:kms", KMSMasterKeyID: expect.anything() },
          },
        ],
      },
      LoggingConfiguration: { DestinationBucketName: expect.anything(), LogFilePrefix: "artifacts/" },
    });
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
    // The definition deployed: the settings written in from config (infra/state-machines/render.ts), the ARNs left to CloudFormation.
    const asl = JSON.parse(machine.Properties.DefinitionString);
    expect(asl.TimeoutSeconds).toBe(72 * 3600);
    expect(asl.States.Runs).toMatchObject({ Type: "Map", MaxConcurrencyPath: "$.plan.max_concurrency" });
    const partition = asl.States.Runs.ItemProcessor.States.ExportPartition;
    expect(partition.Retry).toEqual([
      { ErrorEquals: ["DestinationError", "ExportTimedOut", "RetriesExhausted"], MaxAttempts: 0 },
      // Issue 35: ExportPartition's reservation is the global cap; a throttled chunk waits with jittered backoff.
      {
        ErrorEquals: ["Lambda.TooManyRequestsException"],
        IntervalSeconds: 10,
        MaxAttempts: 12,
        BackoffRate: 2,
        MaxDelaySeconds: 300,
        JitterStrategy: "FULL",
      },
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

  // Retention (issue 17, item 4): runs past their tier's age are deleted by DynamoDB TTL, with their S3 payloads.
  it("streams the runs table's keys and gives it TTL on expires_at", () => {
    const runs = s.data.tables.runs;
    const resource = Template.fromStack(s.data).toJSON().Resources[
      s.data.getLogicalId(runs.node.defaultChild as CfnElement)
    ];
    expect(resource.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: "expires_at",
      Enabled: true,
    });
    expect(resource.Properties.StreamSpecification).toEqual({ StreamViewType: "KEYS_ONLY" });
    // Issue 26: by an SSM parameter, not an export: an export in use could never change (a new stream).
    Template.fromStack(s.data).hasResourceProperties("AWS::SSM::Parameter", {
      Name: s.data.parameterName("Table-runs-StreamArn"),
      Value: { "Fn::GetAtt": [Match.anyValue(), "StreamArn"] },
    });
    expect(JSON.stringify(Template.fromStack(s.data).toJSON().Outputs)).not.toContain(
      ':Table-runs-StreamArn"',
    );
  });

  // Issue 36: a run's write is billed again in each index at the size of what it holds: the runs table's indexes
  // hold keys and ids (GSI3 also a thread marker's times), never the whole run.
  it("projects the runs table's indexes narrowly (INCLUDE), as shared/tables.ts defines them", () => {
    const runs = s.data.tables.runs;
    const resource = Template.fromStack(s.data).toJSON().Resources[
      s.data.getLogicalId(runs.node.defaultChild as CfnElement)
    ];
    const projections = Object.fromEntries(
      resource.Properties.GlobalSecondaryIndexes.map(
        (i: { IndexName: string; Projection: { ProjectionType: string; NonKeyAttributes?: string[] } }) => [
          i.IndexName,
          i.Projection,
        ],
      ),
    );
    expect(projections).toEqual({
      GSI1: { ProjectionType: "INCLUDE", NonKeyAttributes: ["id"] },
      GSI2: { ProjectionType: "INCLUDE", NonKeyAttributes: ["id"] },
      GSI3: {
        ProjectionType: "INCLUDE",
        NonKeyAttributes: ["id", "thread_id", "first_start_time", "last_start_time"],
      },
    });
  });

  it("feeds RunRetentionCleanup the runs stream's TTL deletes of run items only, retried, with failures queued", () => {
    const wf = Template.fromStack(s.workflows);
    const fn = s.workflows.taskFunctions.get("RunRetentionCleanup")!;
    wf.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      FunctionName: { Ref: logicalId(fn) },
      EventSourceArn: { Ref: Match.stringLikeRegexp("^SsmParameterValue.*StreamArn") },
      StartingPosition: "TRIM_HORIZON",
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      MaximumRetryAttempts: 10,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
      FilterCriteria: {
        Filters: [
          {
            Pattern: JSON.stringify({
              eventName: ["REMOVE"],
              userIdentity: { type: ["Service"], principalId: ["dynamodb.amazonaws.com"] },
              dynamodb: { Keys: { SK: { S: ["run", { prefix: "attachment#" }] } } },
            }),
          },
        ],
      },
    });
    expect(wf.findResources("AWS::Lambda::EventSourceMapping")).toSatisfy(
      (m: object) => Object.keys(m).length === 1,
    );
    wf.hasResourceProperties("AWS::SQS::Queue", { SqsManagedSseEnabled: true });
    wf.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Threshold: 1,
    });
  });

  it("lets RunRetentionCleanup list and delete payloads/ of the platform bucket, read runs by key, and nothing else", () => {
    const fn = s.workflows.taskFunctions.get("RunRetentionCleanup")!;
    const role = Stack.of(fn).getLogicalId(fn.role!.node.defaultChild as CfnElement);
    // Its own role: not the task role with read/write on every table and the whole bucket.
    for (const [name, other] of s.workflows.taskFunctions)
      if (name !== "RunRetentionCleanup") expect(other.role).not.toBe(fn.role);
    const statements = statementsOf(s.workflows, role);
    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => a.startsWith("s3:")).sort()).toEqual(["s3:DeleteObject", "s3:ListBucket"]);
    expect(actions.filter((a) => a.startsWith("dynamodb:")).sort()).toEqual([
      "dynamodb:DescribeStream",
      "dynamodb:GetItem",
      "dynamodb:GetRecords",
      "dynamodb:GetShardIterator",
      "dynamodb:ListStreams",
    ]);
    expect(actions.some((a) => /^kms:(Encrypt|GenerateDataKey|ReEncrypt)/.test(a))).toBe(false);
    const list = statements.find((st) => actionsOf(st).includes("s3:ListBucket"));
    expect(list.Condition).toEqual({ StringLike: { "s3:prefix": ["payloads/*"] } });
    const del = statements.find((st) => actionsOf(st).includes("s3:DeleteObject"));
    expect(JSON.stringify(del.Resource)).toMatch(/"\/payloads\/\*"\]/);
    expect(statements.find((st) => actionsOf(st).includes("sqs:SendMessage"))).toBeDefined();
    // Reads runs by key (is an expired attachment's run still there?): the runs table itself, no index.
    const get = statements.find((st) => actionsOf(st).includes("dynamodb:GetItem"));
    expect(JSON.stringify(get.Resource)).toMatch(/Table-runs-Arn"\}$/);
  });

  // Agent server crons (issue 15, item 1): due ticks fire at the start of every minute, in UTC.
  it("fires agent cron ticks every minute: a cron(* * * * ? *) schedule targeting AgentCronTick", () => {
    const wf = Template.fromStack(s.workflows);
    const [tickFn] = Object.keys(
      wf.findResources("AWS::Lambda::Function", {
        Properties: { FunctionName: "agent-platform-AgentCronTick" },
      }),
    );
    expect(tickFn).toBeDefined();
    wf.hasResourceProperties("AWS::Scheduler::Schedule", {
      ScheduleExpression: "cron(* * * * ? *)",
      GroupName: "agent-platform",
      FlexibleTimeWindow: { Mode: "OFF" },
      Target: Match.objectLike({ Arn: { "Fn::GetAtt": [tickFn, "Arn"] } }),
    });
  });

  it("deploys the revision machine from its ASL with every placeholder resolved", () => {
    const wf = Template.fromStack(s.workflows);
    const machine = Object.values(wf.findResources("AWS::StepFunctions::StateMachine")).find(
      (m: any) => m.Properties.StateMachineName === "agent-platform-revision",
    ) as any;
    expect(machine).toBeDefined();
    // Issue 35: its state holds the build's presigned URLs: every event logged, never the execution data.
    expect(machine.Properties.LoggingConfiguration).toMatchObject({
      Level: "ALL",
      IncludeExecutionData: false,
    });
    const text = readFileSync(join(ROOT, "infra/state-machines/revision.asl.json"), "utf8");
    const subs = machine.Properties.DefinitionSubstitutions;
    expect(Object.keys(subs).sort()).toEqual(placeholdersOf(text).sort());
    expect(Object.keys(subs).sort()).toEqual([
      "RevisionBuildFinishFunctionArn",
      "RevisionBuildProjectName",
      "RevisionBuildStartFunctionArn",
      "RevisionDeployFunctionArn",
      "RevisionFailedFunctionArn",
      "RevisionPrepareFunctionArn",
    ]);
    // What CloudFormation does with DefinitionSubstitutions: nothing of the form ${…} may survive.
    const resolved = Object.keys(subs).reduce((t, k) => t.replaceAll(`\${${k}}`, "resolved"), text);
    expect(resolved).not.toContain("${");
    expect(subs.RevisionBuildProjectName).toEqual({ Ref: logicalId(s.workflows.revisionBuild!.project) });
    for (const name of [
      "RevisionPrepare",
      "RevisionBuildStart",
      "RevisionBuildFinish",
      "RevisionDeploy",
      "RevisionFailed",
    ])
      expect(subs[`${name}FunctionArn`]).toEqual({
        "Fn::GetAtt": [logicalId(s.workflows.taskFunctions.get(name)!), "Arn"],
      });
  });

  it("runs the build step in a CodeBuild project: arm64 (the runtimes' architecture) with Node 22, pinned esbuild, no platform setting, 30 min (+5 queued), no project limit unless set", () => {
    const wf = Template.fromStack(s.workflows);
    const projects = Object.values(wf.findResources("AWS::CodeBuild::Project"));
    expect(projects).toHaveLength(1);
    const p = projects[0].Properties;
    expect(p).toMatchObject({
      Name: BUILD_PROJECT_NAME,
      TimeoutInMinutes: 30,
      QueuedTimeoutInMinutes: 5,
      Source: { Type: "S3", Location: expect.anything() },
      Environment: {
        Image: "aws/codebuild/amazonlinux-aarch64-standard:3.0",
        Type: "ARM_CONTAINER",
        PrivilegedMode: false,
      },
      LogsConfig: { CloudWatchLogs: { Status: "ENABLED", GroupName: expect.anything() } },
    });
    // A new account's concurrent-build quota may be below any limit: none unless the operator sets one.
    expect(p.ConcurrentBuildLimit).toBeUndefined();
    const spec = JSON.parse(p.Source.BuildSpec);
    expect(spec.phases.install["runtime-versions"]).toEqual({ nodejs: 22 });
    expect(spec.phases.install.commands).toEqual(["npm install --no-audit --no-fund"]);
    expect(spec.phases.build.commands).toEqual([`node --enable-source-maps ${BUILD_SCRIPT}`]);
    // Its job comes as presigned URLs from RevisionBuildStart: no table name, key or bucket in its environment.
    expect(p.Environment.EnvironmentVariables).toEqual([
      { Name: "LOG_LEVEL", Type: "PLAINTEXT", Value: "info" },
    ]);
    wf.hasResourceProperties("AWS::Logs::LogGroup", {
      LogGroupName: Match.absent(),
      RetentionInDays: 30,
    });
  });

  it("gives the build's role no table, no platform key and no artifact bucket: only its asset, logs and own key", () => {
    const project = s.workflows.revisionBuild!.project;
    const statements = statementsOf(s.workflows, logicalId(project.role!));
    const text = JSON.stringify(statements);
    expect(statements.flatMap(actionsOf).filter((a) => a.startsWith("dynamodb:"))).toEqual([]);
    expect(text).not.toMatch(/AgentPlatformData:(Table|Key|Bucket|Artifact)/i);
    // KMS only on the build's own key, which encrypts nothing of the platform's.
    const buildKey = logicalId(project.node.scope!.node.findChild("Key"));
    for (const st of statements.filter((x) => actionsOf(x).some((a) => a.startsWith("kms:"))))
      expect(st.Resource).toEqual({ "Fn::GetAtt": [buildKey, "Arn"] });
    // S3 only on the build step's own code (the CDK asset), never the artifact bucket.
    for (const st of statements.filter((x) => actionsOf(x).some((a) => a.startsWith("s3:"))))
      expect(JSON.stringify(st.Resource)).toContain("cdk-hnb659fds-assets");
    expect(statements.flatMap(actionsOf).filter((a) => /^(s3:Put|s3:Delete)/.test(a))).toEqual([]);
  });

  it("bundles the build step to one ESM file with esbuild external and its run-time deps pinned", () => {
    const out = mkdtempSync(join(tmpdir(), "revision-build-"));
    bundleBuildStep(out);
    // The untrusted step (a process of its own) calls esbuild; the build step starts it from its own bundle.
    const script = readFileSync(join(out, SOURCE_SCRIPT), "utf8");
    expect(script).toMatch(/from\s*"esbuild"/);
    expect(script).toMatch(/from\s*"typescript\/unstable\/async"/);
    expect(script).not.toContain("esbuild/lib/main.js");
    expect(readFileSync(join(out, BUILD_SCRIPT), "utf8")).toContain("build-source.mjs");
    const pkg = JSON.parse(readFileSync(join(out, "package.json"), "utf8"));
    expect(Object.keys(pkg.dependencies)).toEqual(BUILD_DEPENDENCIES);
    for (const [name, version] of Object.entries(pkg.dependencies)) {
      const installed = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"));
      expect(version, name).toBe(installed.version);
    }
  });

  it("lets the revision machine start, stop and watch builds of that project only", () => {
    const sm = s.workflows.stateMachines.get("revision")!;
    const statements = statementsOf(s.workflows, logicalId(sm.role));
    const codebuild = statements.filter((st) => actionsOf(st).some((a) => a.startsWith("codebuild:")));
    expect(codebuild).toEqual([
      {
        Effect: "Allow",
        Action: ["codebuild:BatchGetBuilds", "codebuild:StartBuild", "codebuild:StopBuild"],
        Resource: { "Fn::GetAtt": [logicalId(s.workflows.revisionBuild!.project), "Arn"] },
      },
    ]);
    const events = statements.filter((st) => actionsOf(st).some((a) => a.startsWith("events:")));
    expect(events).toHaveLength(1);
    expect(actionsOf(events[0]).sort()).toEqual([
      "events:DescribeRule",
      "events:PutRule",
      "events:PutTargets",
    ]);
    expect(JSON.stringify(events[0].Resource)).toContain(
      ":rule/StepFunctionsGetEventForCodeBuildStartBuildRule",
    );
    // No other machine may start builds.
    const bulk = s.workflows.stateMachines.get("bulk-export")!;
    expect(JSON.stringify(statementsOf(s.workflows, logicalId(bulk.role)))).not.toContain("codebuild:");
  });

  it("routes ended revision executions to RevisionExecutionEnded and sweeps revisions every 5 minutes", () => {
    const wf = Template.fromStack(s.workflows);
    const fnArn = (name: string) => ({
      "Fn::GetAtt": [logicalId(s.workflows.taskFunctions.get(name)!), "Arn"],
    });
    wf.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["aws.states"],
        detail: {
          status: ["FAILED", "TIMED_OUT", "ABORTED"],
          stateMachineArn: [
            {
              "Fn::Join": [
                "",
                Match.arrayWith([Match.stringLikeRegexp(":stateMachine:agent-platform-revision$")]),
              ],
            },
          ],
        },
      },
      Targets: [Match.objectLike({ Arn: fnArn("RevisionExecutionEnded") })],
    });
    wf.hasResourceProperties("AWS::Scheduler::Schedule", {
      ScheduleExpression: "rate(5 minutes)",
      Target: Match.objectLike({ Arn: fnArn("RevisionSweeper") }),
    });
  });

  it("gives control and task handlers the artifact bucket, with only the access each needs; agent handlers the UI files only", () => {
    const withArtifacts = (stacks: Stack[]) => {
      const fns = apiFunctions(stacks);
      expect(fns.length).toBeGreaterThan(0);
      for (const f of fns) expect(f.Properties.Environment.Variables.ARTIFACT_BUCKET).toBeDefined();
    };
    withArtifacts([s.api.groups.get("control")!]);
    withArtifacts([s.api.groups.get("agent")!]);
    withArtifacts([s.workflows]);

    const artifactStatements = (stack: Stack) =>
      resourcesOf([stack], "AWS::IAM::Policy")
        .flatMap((p) => p.Properties.PolicyDocument.Statement)
        .filter((st: any) => JSON.stringify(st.Resource).includes("ArtifactBucketArn"));
    const actions = (stack: Stack) => new Set(artifactStatements(stack).flatMap(actionsOf));
    const control = actions(s.api.groups.get("control")!);
    expect(control).toContain("s3:GetObject*");
    expect(control).toContain("s3:DeleteObject*");
    expect(control).not.toContain("s3:PutObject");
    // Agent-server code runs in each deployment's function: the agent group reads only the generative-UI files
    // the browser loads without an API key (GET /agents/{id}/ui/{name}/{file}), and lists nothing.
    expect([...actions(s.api.groups.get("agent")!)]).toEqual(["s3:GetObject"]);
    expect(
      JSON.stringify(artifactStatements(s.api.groups.get("agent")!).map((st: any) => st.Resource)),
    ).toMatch(/^\[\{"Fn::Join":\["",\[\{[^\]]*\},"\/artifacts\/\*\/ui\/\*"\]\]\}\]$/);
    // Task functions read artifacts and write the build's log, and for the build, whose own role has none of
    // this, its artifact and exchange objects (artifacts/, builds/); they delete only the build's exchange
    // objects. The deploy log and runtime code (logs/, runtimes/) are the deploy role's (deploy-role.test.ts).
    const taskRole = s.workflows.node.findChild("TaskRole") as IConstruct;
    const tasksArtifacts = statementsOf(s.workflows, logicalId(taskRole)).filter((st) =>
      JSON.stringify(st.Resource).includes("ArtifactBucketArn"),
    );
    const prefixes = (sts: any[]) =>
      [...JSON.stringify(sts).matchAll(/"\/([a-z]+)\/\*"/g)].map((m) => m[1]).sort();
    expect(prefixes(tasksArtifacts.filter((st) => actionsOf(st).includes("s3:PutObject")))).toEqual([
      "artifacts",
      "builds",
      "logs",
    ]);
    // A build's exchange objects, and what a sweeper resuming a deleted deployment's purge deletes.
    expect(prefixes(tasksArtifacts.filter((st) => actionsOf(st).includes("s3:DeleteObject*")))).toEqual([
      "artifacts",
      "builds",
      "logs",
      "runtimes",
    ]);
    for (const g of ["platform", "export", "system"] as const) {
      const group = s.api.groups.get(g);
      if (group) expect(artifactStatements(group), g).toEqual([]);
    }
  });

  describe("web console", () => {
    const consoleTemplate = () => Template.fromStack(s.console);
    const distribution = () =>
      Object.values(consoleTemplate().findResources("AWS::CloudFront::Distribution"))[0].Properties
        .DistributionConfig;
    const originOf = (behavior: any) =>
      distribution().Origins.find((o: any) => o.Id === behavior.TargetOriginId);

    it("keeps the console bucket private: all public access blocked, SSL only, encrypted, access logged", () => {
      const bucket = consoleTemplate().toJSON().Resources[logicalId(s.console.bucket)];
      expect(bucket.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
        },
        LoggingConfiguration: { DestinationBucketName: expect.anything(), LogFilePrefix: "console/" },
      });
      expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
    });

    it("lets only the distribution read the console bucket, through Origin Access Control", () => {
      const t = consoleTemplate();
      const bucketId = logicalId(s.console.bucket);
      const policy = Object.values(t.findResources("AWS::S3::BucketPolicy")).find(
        (p) => p.Properties.Bucket.Ref === bucketId,
      )!;
      const allows = policy.Properties.PolicyDocument.Statement.filter((st: any) => st.Effect === "Allow");
      expect(allows).toEqual([
        {
          Effect: "Allow",
          Principal: { Service: "cloudfront.amazonaws.com" },
          Action: "s3:GetObject",
          Resource: expect.anything(),
          Condition: { StringEquals: { "AWS:SourceArn": expect.anything() } },
        },
      ]);
      // The condition names this distribution, not any.
      expect(JSON.stringify(allows[0].Condition)).toContain(logicalId(s.console.distribution));
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
      );
      t.hasResourceProperties("AWS::CloudFront::OriginAccessControl", {
        OriginAccessControlConfig: {
          OriginAccessControlOriginType: "s3",
          SigningBehavior: "always",
          SigningProtocol: "sigv4",
        },
      });
      const d = distribution();
      expect(d.DefaultRootObject).toBe("index.html");
      const s3 = originOf(d.DefaultCacheBehavior);
      expect(s3.DomainName).toEqual({ "Fn::GetAtt": [bucketId, "RegionalDomainName"] });
      expect(s3.OriginAccessControlId).toEqual({ "Fn::GetAtt": [expect.any(String), "Id"] });
      expect(s3.S3OriginConfig).toEqual({ OriginAccessIdentity: "" });
      expect(d.DefaultCacheBehavior).toMatchObject({
        AllowedMethods: ["GET", "HEAD"],
        ViewerProtocolPolicy: "redirect-to-https",
      });
    });

    it("routes each API prefix of the manifest to its API's origin: the HTTP API, or the agent REST API at its stage", () => {
      expect(apiPathPatterns(routes)).toEqual({
        http: ["/api-host/*", "/api/*", "/ok", "/openapi.json", "/v1/*", "/v2/*"],
        rest: ["/agents/*"],
      });
      const behaviors = distribution().CacheBehaviors;
      expect(behaviors.map((b: any) => b.PathPattern).sort()).toEqual(
        ["/agents/*", "/api-host/*", "/api/*", "/ok", "/openapi.json", "/v1/*", "/v2/*"].sort(),
      );
      // Issue 26: the ids come by the API stack's SSM parameters, not exports (a replaced API must not block).
      const api = Template.fromStack(s.api);
      api.hasResourceProperties("AWS::SSM::Parameter", {
        Name: parameterName(s.api, "HttpApiId"),
        Value: { Ref: s.api.getLogicalId(s.api.api.node.defaultChild as CfnElement) },
      });
      api.hasResourceProperties("AWS::SSM::Parameter", {
        Name: parameterName(s.api, "AgentRestApiId"),
        Value: s.api.resolve(s.api.groups.get("agent")!.restApi!.restApiId),
      });
      const httpApiId = JSON.stringify(s.console.resolve(s.api.httpApiIdIn(s.console)));
      const agentApiId = JSON.stringify(s.console.resolve(s.api.agentApiIdIn(s.console)));
      expect(httpApiId).toMatch(/^\{"Ref":"SsmParameterValue.*HttpApiId/);
      expect(agentApiId).toMatch(/^\{"Ref":"SsmParameterValue.*AgentRestApiId/);
      for (const b of behaviors) {
        const origin = originOf(b);
        const domain = JSON.stringify(origin.DomainName);
        expect(domain).toContain(".execute-api.");
        if (b.PathPattern === "/agents/*") {
          expect(domain).toContain(agentApiId.slice(1, -1));
          expect(origin.OriginPath).toBe(`/${AGENT_STAGE}`);
        } else {
          expect(domain, b.PathPattern).toContain(httpApiId.slice(1, -1));
          expect(origin.OriginPath, b.PathPattern).toBeUndefined();
        }
        expect(origin.CustomOriginConfig).toMatchObject({
          OriginProtocolPolicy: "https-only",
          OriginReadTimeout: 60,
          OriginSSLProtocols: ["TLSv1.2"],
        });
      }
    });

    it("passes API calls through uncached and whole: every method, header but Host, query string; no compression", () => {
      for (const b of distribution().CacheBehaviors) {
        expect(b, b.PathPattern).toMatchObject({
          CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
          OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
          AllowedMethods: ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"],
          ViewerProtocolPolicy: "https-only",
          Compress: false,
        });
      }
    });

    it("sends the console's CSP (the local gateway's), HSTS, nosniff, frame-deny and no-referrer with its files", () => {
      const t = consoleTemplate();
      const policyId = distribution().DefaultCacheBehavior.ResponseHeadersPolicyId.Ref;
      const policy = t.toJSON().Resources[policyId].Properties.ResponseHeadersPolicyConfig;
      // The CSP's tokens read back as {name}: images from the platform bucket's endpoint, where attachments are.
      const text = (v: any): string =>
        typeof v === "string"
          ? v
          : v["Fn::Join"]
            ? v["Fn::Join"][1].map(text).join(v["Fn::Join"][0])
            : `{${v.Ref ?? v["Fn::ImportValue"]}}`;
      const { ContentSecurityPolicy: csp, ...security } = policy.SecurityHeadersConfig;
      expect(text(csp.ContentSecurityPolicy)).toBe(
        consoleCsp("https://{AgentPlatformData:BucketName}.s3.{AWS::Region}.{AWS::URLSuffix}"),
      );
      expect(text(csp.ContentSecurityPolicy)).not.toMatch(/img-src[^;]*\*/);
      expect(security).toEqual({
        StrictTransportSecurity: {
          AccessControlMaxAgeSec: 63072000,
          IncludeSubdomains: true,
          Override: true,
        },
        ContentTypeOptions: { Override: true },
        FrameOptions: { FrameOption: "DENY", Override: true },
        ReferrerPolicy: { ReferrerPolicy: "no-referrer", Override: true },
      });
      // API answers get the same headers but the CSP (they are not pages).
      const apiPolicyId = distribution().CacheBehaviors[0].ResponseHeadersPolicyId.Ref;
      const api =
        t.toJSON().Resources[apiPolicyId].Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
      expect(api.ContentSecurityPolicy).toBeUndefined();
      expect(api.StrictTransportSecurity).toMatchObject({ AccessControlMaxAgeSec: 63072000 });
    });

    it("deploys index.html, app.js and app.css of console/dist to the bucket, invalidating the edge", () => {
      const t = consoleTemplate();
      const deployments = Object.values(t.findResources("Custom::CDKBucketDeployment"));
      expect(deployments).toHaveLength(1);
      const props = deployments[0].Properties;
      expect(props).toMatchObject({
        DestinationBucketName: { Ref: logicalId(s.console.bucket) },
        Prune: true,
        DistributionId: { Ref: logicalId(s.console.distribution) },
        DistributionPaths: ["/*"],
      });
      // The staged asset holds the built console files, and not the build's stamp (.digest).
      const [key] = props.SourceObjectKeys;
      const staged = join(app.outdir, `asset.${key.replace(/\.zip$/, "")}`);
      expect(readdirSync(staged)).toEqual(expect.arrayContaining(CONSOLE_FILES));
      expect(readdirSync(staged).sort()).toEqual(
        readdirSync(CONSOLE_DIST)
          .filter((f) => !f.startsWith("."))
          .sort(),
      );
      expect(readFileSync(join(staged, "index.html"), "utf8")).toMatch(/app\.js/);
    });

    it("outputs ConsoleUrl, the distribution's https address", () => {
      expect(consoleTemplate().toJSON().Outputs.ConsoleUrl.Value).toEqual({
        "Fn::Join": [
          "",
          ["https://", { "Fn::GetAtt": [logicalId(s.console.distribution), "DomainName"] }, "/"],
        ],
      });
    });

    it("refuses routes CloudFront cannot route by prefix, or that shadow a console file", () => {
      const base = { ...routes[0], method: "GET" as const, group: "platform" as const };
      expect(() => apiPathPatterns([{ ...base, path: "/{tenant}/x" }])).toThrow(
        /no fixed first path segment/,
      );
      expect(() => apiPathPatterns([{ ...base, path: "/app.js" }])).toThrow(
        /shadows the console file app\.js/,
      );
    });
  });

  it("has no agent origin unless it is configured: no custom domain, no record, one agent API, Host not read", () => {
    for (const type of [
      "AWS::ApiGateway::DomainName",
      "AWS::ApiGateway::BasePathMapping",
      "AWS::Route53::RecordSet",
    ])
      expect(resourcesOf(allStacks(app), type), type).toEqual([]);
    expect(resourcesOf(allStacks(app), "AWS::ApiGateway::RestApi")).toHaveLength(1);
    for (const f of apiFunctions(groups))
      expect(f.Properties.Environment.Variables.AGENT_ORIGIN_DOMAIN).toBeUndefined();
    expect(Template.fromStack(s.api).findOutputs("AgentOriginUrl")).toEqual({});
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

describe("each deployment's own origin (agentOriginDomain: a wildcard custom domain routed by Host)", () => {
  const settings = {
    [AGENT_ORIGIN_CONTEXT.domain]: "agents.example.com",
    [AGENT_ORIGIN_CONTEXT.certificateArn]: "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f",
    [AGENT_ORIGIN_CONTEXT.hostedZoneId]: "Z0123456789ABCDEFGHIJ",
  };
  let app: App;
  let agent: Template;
  let routerId: string;
  beforeAll(() => {
    let s: PlatformStacks;
    ({ app, stacks: s } = build(undefined, settings));
    agent = Template.fromStack(s.api.groups.get("agent")!);
    [routerId] = Object.entries(agent.findResources("AWS::Lambda::Function")).find(([, f]) =>
      String(f.Properties.Description).includes("Routes agent-server requests"),
    )!;
  }, 120_000);

  it("adds a regional wildcard custom domain *.<domain> with the operator's certificate, TLS 1.2", () => {
    agent.hasResourceProperties("AWS::ApiGateway::DomainName", {
      DomainName: "*.agents.example.com",
      EndpointConfiguration: { Types: ["REGIONAL"] },
      RegionalCertificateArn: settings.agentOriginCertificateArn,
      SecurityPolicy: "TLS_1_2",
    });
  });

  it("maps the whole domain to an API of its own: a catch-all (/ and /{proxy+}, any method) streamed to the router", () => {
    const apis = agent.findResources("AWS::ApiGateway::RestApi");
    const [originId, origin] = Object.entries(apis).find(([, a]) => a.Properties.DisableExecuteApiEndpoint)!;
    expect(origin.Properties.Name).toBe("agent-platform-agent-origins");
    expect(origin.Properties.BinaryMediaTypes).toEqual(["*/*"]);
    const [mapping] = Object.values(agent.findResources("AWS::ApiGateway::BasePathMapping"));
    expect(mapping!.Properties.RestApiId).toEqual({ Ref: originId });
    expect(mapping!.Properties.BasePath).toBeUndefined();
    const methods = Object.values(agent.findResources("AWS::ApiGateway::Method")).filter(
      (m) => m.Properties.RestApiId.Ref === originId,
    );
    expect(methods.map((m) => m.Properties.HttpMethod)).toEqual(["ANY", "ANY"]);
    const resources = agent.findResources("AWS::ApiGateway::Resource");
    const on = methods.map((m) =>
      m.Properties.ResourceId.Ref ? resources[m.Properties.ResourceId.Ref]!.Properties.PathPart : "/",
    );
    expect(on.sort()).toEqual(["/", "{proxy+}"]);
    for (const m of methods) {
      expect(m.Properties.Integration).toMatchObject({ Type: "AWS_PROXY", ResponseTransferMode: "STREAM" });
      expect(JSON.stringify(m.Properties.Integration.Uri)).toContain(routerId);
    }
    // Its stage is throttled as the agent API's is: API Gateway's throttle answers 429 with Retry-After there too.
    const throttled = Object.values(agent.findResources("AWS::ApiGateway::GatewayResponse")).filter(
      (r) => r.Properties.RestApiId.Ref === originId && r.Properties.ResponseType === "THROTTLED",
    );
    expect(throttled).toHaveLength(1);
    expect(throttled[0]!.Properties).toMatchObject({
      StatusCode: "429",
      ResponseParameters: {
        "gatewayresponse.header.Retry-After": `'${GATEWAY_THROTTLE_RETRY_AFTER_SECONDS}'`,
      },
    });
  });

  it("lets the router invoke the functions of the agent routes no runtime serves, those only, named by handler", () => {
    const fns = agent.findResources("AWS::Lambda::Function");
    const own = routes.filter((r) => r.group === "agent" && !servedByRuntime(r));
    const idOf = (r: Route) =>
      Object.entries(fns).find(([, f]) =>
        String(f.Properties.Description).startsWith(`${r.method} ${r.path}:`),
      )![0];
    // {"<handler>": <Ref to its function>, …} as CloudFormation joins it.
    const named = fns[routerId]!.Properties.Environment.Variables.AGENT_ORIGIN_FUNCTIONS["Fn::Join"][1];
    const pairs = new Map<string, string>();
    for (let i = 0; i + 1 < named.length; i++)
      if (typeof named[i] === "string" && named[i + 1]?.Ref)
        pairs.set(/"([^"]+)":"$/.exec(named[i])![1]!, named[i + 1].Ref);
    expect(Object.fromEntries(pairs)).toEqual(Object.fromEntries(own.map((r) => [r.handler, idOf(r)])));
    const invoke = Object.values(agent.findResources("AWS::IAM::Policy"))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter(
        (st: any) =>
          actionsOf(st).includes("lambda:InvokeFunction") &&
          !JSON.stringify(st.Resource).includes("agent-rt-*"),
      );
    expect(invoke).toHaveLength(1);
    const resources = [invoke[0].Resource].flat().map((r: any) => r["Fn::GetAtt"][0]);
    expect(resources.sort()).toEqual(own.map(idOf).sort());
  });

  it("tells the router the domain, and aliases *.<domain> to the custom domain in the given zone", () => {
    const router = agent.findResources("AWS::Lambda::Function")[routerId]!;
    expect(router.Properties.Environment.Variables.AGENT_ORIGIN_DOMAIN).toBe("agents.example.com");
    agent.hasResourceProperties("AWS::Route53::RecordSet", {
      Name: "*.agents.example.com.",
      Type: "A",
      HostedZoneId: settings.agentOriginHostedZoneId,
      AliasTarget: Match.objectLike({ DNSName: Match.anyValue() }),
    });
  });

  it("passes cdk-nag AwsSolutions with no unacknowledged finding", () => {
    expect(nagViolations(app)).toEqual([]);
  });

  it("refuses incomplete or malformed settings at synth, saying which", () => {
    const read = (ctx: Record<string, string>) => () => agentOriginSettings(new App({ context: ctx }));
    const { agentOriginDomain, agentOriginCertificateArn } = settings;
    expect(read({ agentOriginDomain })).toThrow(
      /agentOriginCertificateArn must be the ARN of an ACM certificate/,
    );
    expect(read({ agentOriginCertificateArn })).toThrow(/agentOriginDomain is not set/);
    expect(read({ agentOriginDomain: "not a domain", agentOriginCertificateArn })).toThrow(
      /is not a domain name/,
    );
    expect(read({ ...settings, agentOriginHostedZoneId: "zone" })).toThrow(
      /is not a Route 53 hosted zone id/,
    );
    expect(read({ agentOriginDomain: ".Agents.Example.com", agentOriginCertificateArn })()).toEqual({
      domain: "agents.example.com",
      certificateArn: agentOriginCertificateArn,
      hostedZoneId: undefined,
    });
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
    // One bulk-export route is enough to check what orchestrating handlers get; it keeps this build small.
    const exportRoute: Route = {
      ...routes[0],
      method: "POST",
      path: "/v1/exports",
      group: "export",
      auth: true,
    };
    ({ app, stacks: s } = build({ tasks: sampleTasks, stateMachineDir: aslDir(), routes: [exportRoute] }));
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
      // Issue 35: never execution data (presigned URLs, tokens); an export machine's errors only (its scale).
      LoggingConfiguration: { Level: "ERROR", IncludeExecutionData: false },
    });
    expect(Object.keys(machine.Properties.DefinitionSubstitutions).sort()).toEqual([
      "PlanFunctionArn",
      "WriteFunctionArn",
    ]);
    wf.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ExecutionsFailed",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      AlarmActions: [{ Ref: Match.stringLikeRegexp("^AlarmTopic") }],
    });
  });

  it("lets bulk export start executions and gives it the machine ARN", () => {
    const t = Template.fromStack(s.api.groups.get("export")!);
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
      /bulk-export\.asl\.json uses \$\{PlanFunctionArn\}, but functions\/task-manifest\.ts has no task named "Plan"/,
    );
  });

  it("fails synth clearly on a placeholder that is neither a task nor a known resource", () => {
    const dir = aslDir();
    writeFileSync(
      join(dir, "other.asl.json"),
      JSON.stringify({
        StartAt: "Build",
        States: {
          Build: {
            Type: "Task",
            Resource: "arn:aws:states:::codebuild:startBuild.sync",
            Parameters: { ProjectName: `\${NoSuchProject}` },
            End: true,
          },
        },
      }),
    );
    const app2 = new App({ context, outdir: mkdtempSync(join(tmpdir(), "cdk-test-")) });
    expect(() => buildApp(app2, { tasks: sampleTasks, stateMachineDir: dir, routes: [] })).toThrow(
      /other\.asl\.json uses \$\{NoSuchProject\}, which is neither \$\{<Task>FunctionArn\} nor one of \$\{RevisionBuildProjectName\}/,
    );
  });

  it("creates no build project when no ASL file names it", () => {
    expect(s.workflows.revisionBuild).toBeUndefined();
    Template.fromStack(s.workflows).resourceCountIs("AWS::CodeBuild::Project", 0);
  });

  it("synthesizes with no ASL files and no tasks (schedule group and role, its ARN's parameter, only)", () => {
    const { stacks } = build({ tasks: [], stateMachineDir: join(tmpdir(), "no-such-dir"), routes: [] });
    const counts = Object.values(Template.fromStack(stacks.workflows).toJSON().Resources).map(
      (r: any) => r.Type,
    );
    expect(counts.sort()).toEqual(["AWS::IAM::Role", "AWS::SSM::Parameter", "AWS::Scheduler::ScheduleGroup"]);
  });
});

describe("web console build", () => {
  it("fails synth clearly when console/dist is not built", () => {
    const app = new App({ context, outdir: mkdtempSync(join(tmpdir(), "cdk-test-")) });
    const empty = mkdtempSync(join(tmpdir(), "console-dist-"));
    expect(() =>
      buildApp(app, {
        tasks: [],
        stateMachineDir: join(tmpdir(), "no-such-dir"),
        routes: [],
        consoleDir: empty,
      }),
    ).toThrow(
      /lacks index\.html, app\.js, app\.css: build the console first \(node infra\/console\/build\.mjs\)/,
    );
  });
});
