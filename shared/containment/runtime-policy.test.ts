import { describe, expect, it } from "vitest";
import { agentKeys, checkpointPk, threads } from "../records/agent.ts";
import { TABLES } from "../tables.ts";
import {
  PLATFORM_INDEX_KEYS,
  runtimeBoundary,
  runtimeKeyPrefixes,
  runtimePolicy,
  runtimeRoleInput,
  runtimeTrustPolicy,
} from "./runtime-policy.ts";

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
  artifactBucketArn: "arn:aws:s3:::agent-platform-artifacts",
  secretsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/secrets",
  traceFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:agent-platform-AgentTraceIngest",
};
const policy = runtimePolicy(scope);
const dynamo = policy.Statement.filter(
  (s) => s.Effect === "Allow" && s.Action.some((a) => a.startsWith("dynamodb:")),
);

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

  // Issue 25 (break-out 5): LeadingKeys let a runtime write any attribute of its own items, GSI1's keys too, so
  // the platform's deployment-by-id lookup returned a forged item.
  it("may not write the keys of the platform's index (GSI1) on the main table, in any write", () => {
    expect(PLATFORM_INDEX_KEYS).toEqual(["GSI1PK", "GSI1SK"]);
    const denies = policy.Statement.filter((s) => s.Effect === "Deny");
    expect(denies).toEqual([
      {
        Sid: "NoPlatformIndexKeys",
        Effect: "Deny",
        Action: ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"],
        Resource: [scope.tables.main],
        Condition: { "ForAnyValue:StringEquals": { "dynamodb:Attributes": ["GSI1PK", "GSI1SK"] } },
      },
    ]);
    // Every write action the role is allowed on the main table is one the deny names.
    const writes = dynamo
      .filter((s) => s.Resource.includes(scope.tables.main))
      .flatMap((s) => s.Action)
      .filter((a) => /Put|Update|BatchWrite/.test(a));
    for (const a of writes) expect(denies[0].Action).toContain(a);
  });

  it("still writes the agent records' own index (AGENT1), the one the runtime's runs, threads and crons use", () => {
    const agent = TABLES.main.indexes.find((i) => i.name === "AGENT1");
    expect(agent).toMatchObject({ name: "AGENT1", partitionKey: "AGENT1PK", sortKey: "AGENT1SK" });
    for (const k of ["AGENT1PK", "AGENT1SK"]) expect(PLATFORM_INDEX_KEYS).not.toContain(k);
  });

  it("names no `*` resource, no table but its two, no index", () => {
    const resources = policy.Statement.flatMap((s) => s.Resource);
    expect(resources).not.toContain("*");
    const tables = resources.filter((r) => r.includes(":table/"));
    expect(tables.filter((r) => r.includes("/index/"))).toEqual([]);
    expect(new Set(tables)).toEqual(new Set([scope.tables.main, scope.tables.checkpoints]));
  });

  it("uses the data key only through DynamoDB and S3, and no other key but the secrets key (its own context, below)", () => {
    const kms = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("kms:")));
    expect(kms.map((s) => s.Resource)).toEqual([[scope.keyArn], [scope.secretsKeyArn]]);
    expect(kms[0].Condition?.StringEquals?.["kms:ViaService"]).toEqual([
      "dynamodb.eu-west-1.amazonaws.com",
      "s3.eu-west-1.amazonaws.com",
    ]);
  });

  it("reaches S3 under its own checkpoint and runtime prefixes only, and invokes only trace ingestion (not its own function)", () => {
    const s3 = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("s3:")));
    expect(s3.flatMap((s) => s.Resource)).toEqual([
      `${scope.bucketArn}/checkpoints/t-1%23d-1/*`,
      `${scope.artifactBucketArn}/runtimes/t-1/d-1/*`,
    ]);
    const invoke = policy.Statement.filter((s) => s.Action.some((a) => a.startsWith("lambda:")));
    expect(invoke.flatMap((s) => s.Action)).toEqual(["lambda:InvokeFunction"]);
    expect(invoke.flatMap((s) => s.Resource)).toEqual([scope.traceFunctionArn]);
    const actions = policy.Statement.flatMap((s) => s.Action);
    for (const a of actions) expect(a).toMatch(/^(dynamodb|s3|kms|lambda|logs):[A-Za-z]+$/);
  });

  it("may be assumed by Lambda in this account only", () => {
    const trust = runtimeTrustPolicy(scope.account).Statement[0];
    expect(trust.Principal).toEqual({ Service: "lambda.amazonaws.com" });
    expect(trust.Condition.StringEquals["aws:SourceAccount"]).toBe(scope.account);
  });
});

describe("a runtime role's permissions boundary (issue 26, finding 4)", () => {
  const boundaryArn = "arn:aws:iam::123456789012:policy/boundary";
  it("the deploy step creates every runtime role with the boundary, under the runtime path", () => {
    const input = runtimeRoleInput(scope, boundaryArn);
    expect(input).toMatchObject({
      RoleName: "agent-rt-d-1",
      Path: "/agent-runtime/",
      PermissionsBoundary: boundaryArn,
    });
  });

  it("the boundary is the runtime policy of any deployment: the same statements, every key wildcarded", () => {
    const { tenant_id, deployment_id, ...account } = scope;
    const boundary = runtimeBoundary(account);
    expect(boundary.Statement.map((s) => [s.Sid, s.Effect, s.Action])).toEqual(
      policy.Statement.map((s) => [s.Sid, s.Effect, s.Action]),
    );
    // Each deployment's own policy falls within it: its resources and keys match the boundary's patterns.
    const like = (pattern: string, value: string) =>
      new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(value);
    for (const [i, own] of policy.Statement.entries()) {
      const bound = boundary.Statement[i];
      for (const r of own.Resource)
        expect(
          bound.Resource.some((b) => like(b, r)),
          r,
        ).toBe(true);
      const keys = own.Condition?.["ForAllValues:StringLike"]?.["dynamodb:LeadingKeys"] as
        | string[]
        | undefined;
      const boundKeys = bound.Condition?.["ForAllValues:StringLike"]?.["dynamodb:LeadingKeys"] as string[];
      for (const k of keys ?? [])
        expect(
          boundKeys.some((b) => like(b, k)),
          k,
        ).toBe(true);
    }
  });
});

describe("a runtime's sealed environment (issue 26, finding 4)", () => {
  it("the runtime may read its own sealed environment object and no other deployment's", () => {
    const st = policy.Statement.find((s) => s.Sid === "OwnSealedEnvironment")!;
    expect(st.Action).toEqual(["s3:GetObject"]);
    expect(st.Resource).toEqual(["arn:aws:s3:::agent-platform-artifacts/runtimes/t-1/d-1/*"]);
  });

  it("the runtime may decrypt with the secrets key only for its own workspace, deployment and environment", () => {
    const kms = policy.Statement.filter((s) => s.Resource.includes(scope.secretsKeyArn));
    expect(kms).toHaveLength(1);
    expect(kms[0].Action).toEqual(["kms:Decrypt"]);
    expect(kms[0].Condition).toEqual({
      StringLike: {
        "kms:EncryptionContext:tenant_id": "t-1",
        "kms:EncryptionContext:deployment_id": "d-1",
        "kms:EncryptionContext:purpose": "runtime-env",
      },
    });
  });
});
