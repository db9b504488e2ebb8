import { describe, expect, it } from "vitest";
import { agentKeys, checkpointPk, threads } from "../../records/agent.ts";
import { runtimeKeyPrefixes, runtimePolicy, runtimeTrustPolicy } from "./policy.ts";

// Issue 13 (b): in AWS a deployment's runtime reads and writes with its own role; what that role allows is
// what the deploy step generates here.
const scope = {
  partition: "aws",
  region: "eu-west-1",
  account: "123456789012",
  tenant_id: "t-1",
  deployment_id: "d-1",
  tables: {
    main: "arn:aws:dynamodb:eu-west-1:123456789012:table/platform-main",
    checkpoints: "arn:aws:dynamodb:eu-west-1:123456789012:table/platform-checkpoints",
  },
  bucketArn: "arn:aws:s3:::agent-platform-bucket",
  keyArn: "arn:aws:kms:eu-west-1:123456789012:key/abc",
  traceFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:agent-platform-AgentTraceIngest",
};
const policy = runtimePolicy(scope);
const dynamo = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("dynamodb:")));

describe("a runtime's execution role", () => {
  it("every DynamoDB statement carries a LeadingKeys condition on the deployment's own prefix", () => {
    expect(dynamo.length).toBe(2);
    for (const s of dynamo) {
      const keys = s.Condition?.["ForAllValues:StringLike"]?.["dynamodb:LeadingKeys"] as string[];
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/d-1#\*$/);
    }
  });

  it("the prefixes are those the agent server's keys start with, and no other deployment's or tenant's", () => {
    const p = runtimeKeyPrefixes("t-1", "d-1");
    expect(threads.key({ scope: "t-1#d-1", thread: "x" }).PK.startsWith(p.main)).toBe(true);
    expect(agentKeys.runsPk("t-1#d-1", "x").startsWith(p.main)).toBe(true);
    expect(checkpointPk("t-1#d-1", "x").startsWith(p.checkpoints)).toBe(true);
    // Another deployment whose id starts the same, another tenant, the control plane: outside.
    expect(threads.key({ scope: "t-1#d-10", thread: "x" }).PK.startsWith(p.main)).toBe(false);
    expect(checkpointPk("t-1#d-10", "x").startsWith(p.checkpoints)).toBe(false);
    expect(threads.key({ scope: "t-2#d-1", thread: "x" }).PK.startsWith(p.main)).toBe(false);
    for (const key of ["T#t-1#DEPLOYMENT", "APIKEY#abc", "TENANT#t-1", "DEPLOYMENT#d-1"])
      expect(key.startsWith(p.main)).toBe(false);
  });

  it("names no `*` resource, no table but its two, no index", () => {
    const resources = policy.Statement.flatMap((s) => s.Resource);
    expect(resources).not.toContain("*");
    const tables = resources.filter((r) => r.includes(":table/"));
    expect(tables.filter((r) => r.includes("/index/"))).toEqual([]);
    expect(new Set(tables)).toEqual(new Set([scope.tables.main, scope.tables.checkpoints]));
  });

  it("uses no KMS key but the data key, and that only through DynamoDB and S3 (no direct decrypt of a secret)", () => {
    const kms = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("kms:")));
    expect(kms).toHaveLength(1);
    expect(kms[0].Resource).toEqual([scope.keyArn]);
    expect(kms[0].Condition?.StringEquals?.["kms:ViaService"]).toEqual([
      "dynamodb.eu-west-1.amazonaws.com",
      "s3.eu-west-1.amazonaws.com",
    ]);
  });

  it("reaches S3 under its own checkpoint prefix only, and invokes only itself and trace ingestion", () => {
    const s3 = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("s3:")));
    expect(s3.flatMap((s) => s.Resource)).toEqual([`${scope.bucketArn}/checkpoints/t-1%23d-1/*`]);
    const invoke = policy.Statement.filter((s) => s.Action.includes("lambda:InvokeFunction"));
    expect(invoke.flatMap((s) => s.Resource)).toEqual([
      "arn:aws:lambda:eu-west-1:123456789012:function:agent-rt-d-1",
      "arn:aws:lambda:eu-west-1:123456789012:function:agent-rt-d-1:*",
      scope.traceFunctionArn,
    ]);
    const actions = policy.Statement.flatMap((s) => s.Action);
    for (const a of actions) expect(a).toMatch(/^(dynamodb|s3|kms|lambda|logs):[A-Za-z]+$/);
  });

  it("may be assumed by Lambda in this account only", () => {
    const trust = runtimeTrustPolicy(scope.account).Statement[0];
    expect(trust.Principal).toEqual({ Service: "lambda.amazonaws.com" });
    expect(trust.Condition.StringEquals["aws:SourceAccount"]).toBe(scope.account);
  });
});
