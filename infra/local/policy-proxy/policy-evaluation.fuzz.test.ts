import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type PolicyDocument,
  runtimeBoundary,
  runtimePolicy,
} from "../../../shared/containment/runtime-policy.ts";
import { operatorPrincipal } from "../operator.ts";
import { platformPrincipals } from "../platform-roles.ts";
import { compilePolicy } from "./compiled-policy.ts";
import { localRuntimeScope } from "./credentials.ts";
import { policyEvaluator, simulate } from "./evaluate.ts";
import type { Authorization } from "./refusal.ts";

// The compiled policies decide exactly as the simulator does (what the proxy decided before they existed): the
// platform's own policies (every platform role, a runtime's role and its boundary, the operator's) and random
// ones built from the same parts (Allow and Deny, Action and NotAction, wildcards, case, the String operators
// with IfExists and the set operators, Null), asked random requests (actions, ARNs and condition contexts
// around the policies' own, LeadingKeys among them, in other cases and other accounts). With the decision memory
// on, one evaluator answers a whole sequence, so a remembered decision is checked as well as a fresh one.
const ACCOUNT = "000000000000";
const scope = localRuntimeScope("t-1", "d-1");
const { partition: _p, tenant_id: _t, deployment_id: _d, ...platformScope } = scope;
const PLATFORM_POLICIES: PolicyDocument[] = [
  runtimePolicy(scope),
  runtimePolicy(localRuntimeScope("t-2", "d-2")),
  runtimeBoundary({ ...platformScope, partition: "aws" }),
  ...[...platformPrincipals().values()].map((p) => p.policy),
  operatorPrincipal({ accessKeyId: "AKIAOPERATOR", secretAccessKey: "x" }).policy,
];

const main = scope.tables.main;
const checkpoints = scope.tables.checkpoints;
const RESOURCES = [
  main,
  checkpoints,
  `${main}/index/GSI1`,
  `${main}/index/*`,
  main.replace(/main$/, "runs"),
  main.toUpperCase(),
  main.replace("dynamodb", "DynamoDB"),
  main.replace(ACCOUNT, "111111111111"),
  `${main}/stream/2026-01-01T00:00:00.000`,
  `${scope.bucketArn}`,
  `${scope.bucketArn}/checkpoints/t-1%23d-1/th/x`,
  `${scope.bucketArn}/checkpoints/t-1%23d-10/th/x`,
  `${scope.bucketArn}/checkpoints/T-1%23d-1/x`,
  `${scope.bucketArn}/a\nb`,
  `${scope.artifactBucketArn}/runtimes/t-1/d-1/env`,
  `${scope.artifactBucketArn}/builds/b-1/x`,
  `${scope.artifactBucketArn}/artifacts/r/ui/x.js`,
  scope.keyArn,
  scope.secretsKeyArn,
  `arn:aws:kms:us-east-1:${ACCOUNT}:alias/aws/s3`,
  `arn:aws:kms:us-east-1:${ACCOUNT}:alias/local`,
  scope.traceFunctionArn,
  `arn:aws:lambda:us-east-1:${ACCOUNT}:function:agent-rt-d-1`,
  `arn:aws:lambda:us-east-1:${ACCOUNT}:function:agent-rt-d-1:7`,
  `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:revision`,
  `arn:aws:states:us-east-1:${ACCOUNT}:execution:revision:x`,
  `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/agent-platform/x`,
  `arn:aws:iam::${ACCOUNT}:role/agent-runtime/agent-rt-d-1`,
  `arn:aws:iam::${ACCOUNT}:role/agent-rt-d-1`,
  `arn:aws:iam::${ACCOUNT}:role/aws-reserved/x`,
  `arn:aws:iam::aws:policy/ReadOnlyAccess`,
  `arn:aws:iam::${ACCOUNT}:policy/agent-runtime-boundary`,
  `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/agent-rt-d-1`,
  `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/agent-rt-d-1:log-stream:x`,
  `arn:aws:sqs:us-east-1:${ACCOUNT}:CleanupFailures`,
  "*",
  `${scope.bucketArn}/checkpoints/*`,
  "not-an-arn",
  "arn:aws:s3",
];
const ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:Query",
  "dynamodb:Scan",
  "dynamodb:DescribeTable",
  "dynamodb:ListStreams",
  "DynamoDB:getitem",
  "s3:GetObject",
  "s3:PutObject",
  "s3:DeleteObject",
  "s3:ListBucket",
  "s3:ListBucketVersions",
  "S3:GETOBJECT",
  "kms:Decrypt",
  "kms:Encrypt",
  "kms:GenerateDataKey",
  "kms:CreateAlias",
  "KMS:Decrypt",
  "lambda:InvokeFunction",
  "lambda:ListFunctions",
  "lambda:CreateFunction",
  "states:StartExecution",
  "states:StopExecution",
  "scheduler:CreateSchedule",
  "iam:PassRole",
  "iam:GetRole",
  "iam:PutRolePolicy",
  "iam:PutRolePermissionsBoundary",
  "iam:DeleteRolePermissionsBoundary",
  "iam:CreatePolicyVersion",
  "logs:PutLogEvents",
  "sqs:SendMessage",
  "sts:AssumeRole",
  "dynamodb",
  "dynamodb:",
];
const KEYS = [
  "dynamodb:LeadingKeys",
  "dynamodb:leadingkeys",
  "DynamoDB:LeadingKeys",
  "dynamodb:Attributes",
  "kms:ViaService",
  "kms:EncryptionContext:tenant_id",
  "kms:EncryptionContext:deployment_id",
  "kms:EncryptionContext:purpose",
  "s3:prefix",
  "iam:PassedToService",
  "iam:PermissionsBoundary",
  "aws:SourceAccount",
];
const VALUES = [
  "AGENT#t-1#d-1#THREAD",
  "AGENT#t-1#d-1#",
  "AGENT#t-1#d-2#X",
  "agent#t-1#d-1#x",
  "t-1%23d-1#thread",
  "t-1%23d-10#thread",
  "TENANT#t-1",
  "PK",
  "SK",
  "GSI1PK",
  "GSI2SK",
  "dynamodb.us-east-1.amazonaws.com",
  "s3.us-east-1.amazonaws.com",
  "lambda.us-east-1.amazonaws.com",
  "t-1",
  "d-1",
  "d-2",
  "runtime-env",
  "builds/x",
  "logs/x",
  "lambda.amazonaws.com",
  "scheduler.amazonaws.com",
  `arn:aws:iam::${ACCOUNT}:policy/agent-runtime-boundary`,
  "",
  "*",
  "a\nb",
  ACCOUNT,
];
const PRINCIPALS = [
  `arn:aws:sts::${ACCOUNT}:assumed-role/agent-platform-task/local`,
  `arn:aws:iam::${ACCOUNT}:user/local-operator`,
  "arn:aws:sts::111111111111:assumed-role/other/s",
  "lambda.amazonaws.com",
];

const context = fc.dictionary(
  fc.constantFrom(...KEYS),
  fc.oneof(fc.constantFrom(...VALUES), fc.array(fc.constantFrom(...VALUES), { maxLength: 3 })),
  { maxKeys: 4 },
);
const authorization: fc.Arbitrary<Authorization> = fc.record({
  action: fc.constantFrom(...ACTIONS),
  resource: fc.constantFrom(...RESOURCES),
  context,
});

// Random policies from the same parts: patterns with wildcards and other cases beside the literal ones.
const ACTION_PATTERNS = [
  ...ACTIONS.slice(0, 34),
  "*",
  "dynamodb:*",
  "dynamodb:*Item",
  "dynamodb:Get?tem",
  "DYNAMODB:PUT*",
  "s3:*Object*",
  "kms:*",
  "iam:*Role*",
  "lambda:Invoke*",
];
const RESOURCE_PATTERNS = [
  ...RESOURCES.filter((r) => r.startsWith("arn:") && r.split(":").length >= 6),
  "*",
  `${main}*`,
  `${main}/index/*`,
  `arn:aws:dynamodb:*:*:table/*`,
  `arn:aws:dynamodb:us-east-?:${ACCOUNT}:table/agent-platform-main`,
  `arn:AWS:DYNAMODB:US-EAST-1:${ACCOUNT}:table/*`,
  `${scope.bucketArn}/*`,
  `${scope.bucketArn}/checkpoints/t-1%23d-1/*`,
  `${scope.bucketArn}/Checkpoints/*`,
  `arn:aws:s3:::*`,
  `arn:aws:lambda:*:${ACCOUNT}:function:agent-rt-*`,
  `arn:aws:lambda:us-east-1:${ACCOUNT}:function:agent-rt-*:*`,
  `arn:aws:iam::${ACCOUNT}:role/agent-runtime/*`,
  `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/agent-rt-*`,
  `arn:aws:kms:us-east-1:${ACCOUNT}:key/*`,
  `arn:aws:kms:us-east-1:${ACCOUNT}:alias/*`,
];
const CONDITION_VALUES = [
  ...VALUES,
  "AGENT#t-1#d-1#*",
  "AGENT#*",
  "t-1%23d-1#*",
  "*.amazonaws.com",
  "?-1",
  "builds/*",
  "D-1",
];
const OPERATORS = [
  "StringEquals",
  "StringNotEquals",
  "StringLike",
  "StringNotLike",
  "StringEqualsIgnoreCase",
  "StringNotEqualsIgnoreCase",
  "StringEqualsIfExists",
  "StringNotLikeIfExists",
  "ForAllValues:StringLike",
  "ForAllValues:StringEquals",
  "ForAllValues:StringNotEquals",
  "ForAnyValue:StringEquals",
  "ForAnyValue:StringLike",
  "ForAnyValue:StringNotLike",
  "ForAllValues:StringLikeIfExists",
];
const conditionValues = fc.oneof(
  fc.constantFrom(...CONDITION_VALUES),
  fc.array(fc.constantFrom(...CONDITION_VALUES), { minLength: 1, maxLength: 3 }),
);
const condition = fc.oneof(
  fc.dictionary(
    fc.constantFrom(...OPERATORS),
    fc.dictionary(fc.constantFrom(...KEYS), conditionValues, { minKeys: 1, maxKeys: 2 }),
    { minKeys: 1, maxKeys: 2 },
  ),
  fc.record({
    Null: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom("true", "false", "TRUE"), {
      minKeys: 1,
      maxKeys: 2,
    }),
  }),
);
const statement = fc
  .record({
    Effect: fc.constantFrom("Allow", "Deny", "Allow"),
    actions: fc.array(fc.constantFrom(...ACTION_PATTERNS), { minLength: 1, maxLength: 3 }),
    notAction: fc.boolean(),
    Resource: fc.oneof(
      fc.array(fc.constantFrom(...RESOURCE_PATTERNS), { minLength: 1, maxLength: 3 }),
      fc.constantFrom(...RESOURCE_PATTERNS),
    ),
    Condition: fc.option(condition, { nil: undefined }),
  })
  .map(({ actions, notAction, Condition, ...rest }) => ({
    ...rest,
    ...(notAction ? { NotAction: actions } : { Action: actions.length === 1 ? actions[0] : actions }),
    ...(Condition ? { Condition } : {}),
  }));
const randomPolicy = fc
  .array(statement, { minLength: 1, maxLength: 5 })
  .map((Statement) => ({ Version: "2012-10-17", Statement }) as unknown as PolicyDocument);
const policy = fc.oneof(fc.constantFrom(...PLATFORM_POLICIES), randomPolicy);

/** The simulator's answer, or the error it throws (which the compiled path must throw too). */
const simulated = (principal: string, p: PolicyDocument, a: Authorization) => {
  try {
    return simulate(principal, ACCOUNT, p, a);
  } catch (err) {
    return `threw ${(err as Error).message}`;
  }
};
const decided = (
  evaluator: ReturnType<typeof policyEvaluator>,
  principal: string,
  p: PolicyDocument,
  a: Authorization,
) => {
  try {
    return evaluator.firstDenial(principal, ACCOUNT, p, [a])?.decision ?? "Allowed";
  } catch (err) {
    return `threw ${(err as Error).message}`;
  }
};

describe("the compiled policies decide as the simulator", () => {
  it("the platform's own policies compile (none is left to the simulator)", () => {
    for (const p of PLATFORM_POLICIES) expect(compilePolicy(p)).toHaveProperty("statements");
  });

  it("on every request, fresh and remembered, for the platform's policies and random ones", () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(fc.tuple(fc.constantFrom(...PRINCIPALS), authorization), { minLength: 1, maxLength: 6 }),
        (p, requests) => {
          const cached = policyEvaluator();
          const uncached = policyEvaluator({ cache: false });
          // Twice over: the second pass answers from the memory the first one filled.
          for (const [principal, a] of [...requests, ...requests]) {
            const expected = simulated(principal, p, a);
            expect(decided(uncached, principal, p, a)).toBe(expected);
            expect(decided(cached, principal, p, a)).toBe(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  }, 180_000);

  it("a changed policy is decided anew: the memory is the document's", () => {
    const evaluator = policyEvaluator();
    const principal = PRINCIPALS[0];
    const a: Authorization = {
      action: "dynamodb:PutItem",
      resource: main,
      context: { "dynamodb:LeadingKeys": ["AGENT#t-1#d-1#T"] },
    };
    const before = runtimePolicy(scope);
    expect(evaluator.firstDenial(principal, ACCOUNT, before, [a])).toBeUndefined();
    const after = runtimePolicy(localRuntimeScope("t-1", "d-9"));
    expect(evaluator.firstDenial(principal, ACCOUNT, after, [a])?.decision).toBe("ImplicitlyDenied");
    expect(evaluator.firstDenial(principal, ACCOUNT, before, [a])).toBeUndefined();
  });
});
