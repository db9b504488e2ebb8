import { describe, expect, it } from "vitest";
import {
  type PolicyDocument,
  runtimeFunctionName,
  runtimePolicy,
} from "../../../shared/containment/runtime-policy.ts";
import { localRuntimeScope } from "./credentials.ts";
import { firstDenial, policyProblem } from "./evaluate.ts";
import type { Authorization } from "./refusal.ts";

// The runtime's role policy, evaluated by @cloud-copilot/iam-simulate as AWS evaluates it.
const scope = localRuntimeScope("t-1", "d-1");
const policy = runtimePolicy(scope);
/** The same policy without its Deny statements: what the Deny changes. */
const base: PolicyDocument = { ...policy, Statement: policy.Statement.filter((s) => s.Effect !== "Deny") };
const ARN = "arn:aws:sts::000000000000:assumed-role/r/s";
const decide = (p: PolicyDocument, a: Authorization) =>
  firstDenial(ARN, "000000000000", p, [a])?.decision ?? "Allowed";
const put = (keys: string[], attributes = ["PK", "SK"]) => ({
  action: "dynamodb:PutItem",
  resource: scope.tables.main,
  context: { "dynamodb:LeadingKeys": keys, "dynamodb:Attributes": attributes },
});

describe("evaluating the runtime's policy", () => {
  it("the generated policy is a valid identity policy", () => {
    expect(policyProblem(base)).toBeUndefined();
    expect(policyProblem(policy)).toBeUndefined();
  });

  it("ForAllValues:StringLike on dynamodb:LeadingKeys: every key under the prefix, else not allowed", () => {
    expect(decide(policy, put(["AGENT#t-1#d-1#THREAD"]))).toBe("Allowed");
    expect(decide(policy, put(["AGENT#t-1#d-1#A", "AGENT#t-1#d-2#B"]))).toBe("ImplicitlyDenied");
    expect(decide(policy, put(["TENANT#t-1"]))).toBe("ImplicitlyDenied");
  });

  it("ForAllValues holds for a missing key, as in AWS: why the request readers never leave LeadingKeys out", () => {
    expect(decide(policy, { action: "dynamodb:GetItem", resource: scope.tables.main, context: {} })).toBe(
      "Allowed",
    );
  });

  it("ForAnyValue:StringEquals on dynamodb:Attributes in a Deny: an explicit deny whatever allows it", () => {
    expect(decide(policy, put(["AGENT#t-1#d-1#THREAD"], ["PK", "SK", "GSI1PK"]))).toBe("ExplicitlyDenied");
    expect(decide(base, put(["AGENT#t-1#d-1#THREAD"], ["PK", "SK", "GSI1PK"]))).toBe("Allowed");
  });

  it("other tables, indexes, actions and S3 prefixes are not allowed", () => {
    const runs = scope.tables.main.replace(/main$/, "runs");
    expect(decide(policy, { ...put(["AGENT#t-1#d-1#X"]), resource: runs })).toBe("ImplicitlyDenied");
    expect(decide(policy, { ...put(["AGENT#t-1#d-1#X"]), resource: `${scope.tables.main}/index/GSI1` })).toBe(
      "ImplicitlyDenied",
    );
    expect(decide(policy, { action: "dynamodb:Scan", resource: scope.tables.main, context: {} })).toBe(
      "ImplicitlyDenied",
    );
    const object = (key: string) => ({
      action: "s3:PutObject",
      resource: `${scope.bucketArn}/${key}`,
      context: {},
    });
    expect(decide(policy, object("checkpoints/t-1%23d-1/th/x"))).toBe("Allowed");
    expect(decide(policy, object("checkpoints/t-1%23d-10/th/x"))).toBe("ImplicitlyDenied");
  });

  it("a runtime may invoke the trace ingestion function, and not its own function (only the platform starts its runs)", () => {
    const invoke = (resource: string): Authorization => ({
      action: "lambda:InvokeFunction",
      resource,
      context: {},
    });
    const own = `arn:aws:lambda:${scope.region}:${scope.account}:function:${runtimeFunctionName("d-1")}`;
    expect(decide(policy, invoke(scope.traceFunctionArn))).toBe("Allowed");
    expect(decide(policy, invoke(own))).toBe("ImplicitlyDenied");
    expect(decide(policy, invoke(`${own}:7`))).toBe("ImplicitlyDenied");
    expect(decide(policy, invoke(`${own}:$LATEST`))).toBe("ImplicitlyDenied");
  });

  it("kms:ViaService and the encryption context are evaluated, with the key's default policy as KMS needs it", () => {
    const kms = (resource: string, context: Record<string, string>): Authorization => ({
      action: "kms:Decrypt",
      resource,
      context,
    });
    expect(
      decide(policy, kms(scope.keyArn, { "kms:ViaService": `dynamodb.${scope.region}.amazonaws.com` })),
    ).toBe("Allowed");
    expect(
      decide(policy, kms(scope.keyArn, { "kms:ViaService": `lambda.${scope.region}.amazonaws.com` })),
    ).toBe("ImplicitlyDenied");
    expect(decide(policy, kms(scope.keyArn, {}))).toBe("ImplicitlyDenied");
    const own = {
      "kms:EncryptionContext:tenant_id": "t-1",
      "kms:EncryptionContext:deployment_id": "d-1",
      "kms:EncryptionContext:purpose": "runtime-env",
    };
    expect(decide(policy, kms(scope.secretsKeyArn, own))).toBe("Allowed");
    expect(
      decide(policy, kms(scope.secretsKeyArn, { ...own, "kms:EncryptionContext:deployment_id": "d-2" })),
    ).toBe("ImplicitlyDenied");
    expect(decide(policy, kms(scope.secretsKeyArn, {}))).toBe("ImplicitlyDenied");
  });

  it("an invalid policy allows nothing", () => {
    const bad = {
      Version: "2012-10-17",
      Statement: [{ Sid: "x", Effect: "Perhaps", Action: ["dynamodb:*"], Resource: ["*"] }],
    } as unknown as PolicyDocument;
    expect(policyProblem(bad)).toBeDefined();
    expect(decide(bad, put(["AGENT#t-1#d-1#X"]))).toBe("ImplicitlyDenied");
  });
});
