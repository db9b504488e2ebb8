import { describe, expect, it } from "vitest";
import { type ResourceArns, renderRole } from "../policies/render.ts";
import { appShape, platformRoles } from "../policies/roles.ts";

// Issue 26: runtime log groups never expired, and runtimes kept an old layer after an upgrade. The deploy step makes each with a retention
// (shared/agent/hosting/log-group.ts): its role may create them and set their retention, and delete them with
// the deployment, and only the runtimes' groups; no other platform role touches log groups.
const arns: ResourceArns = {
  partition: "aws",
  region: "eu-west-1",
  account: "123456789012",
  table: (id) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${id}`,
  tableStream: (id) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${id}/stream/x`,
  bucket: (id) => `arn:aws:s3:::${id}`,
  key: (id) => `arn:aws:kms:eu-west-1:123456789012:key/${id}`,
  stateMachine: (n) => `arn:aws:states:eu-west-1:123456789012:stateMachine:${n}`,
  schedulerRole: () => "arn:aws:iam::123456789012:role/scheduler",
  runtimeBoundary: () => "arn:aws:iam::123456789012:policy/agent-runtime-boundary",
  runtimeLayer: () => "arn:aws:lambda:eu-west-1:123456789012:layer:rt:1",
  failureQueue: (t) => `arn:aws:sqs:eu-west-1:123456789012:${t}`,
};
const roles = platformRoles(appShape());
const statements = (id: Parameters<typeof roles.get>[0]) => renderRole(roles.get(id)!, arns);
const logs = (sts: ReturnType<typeof statements>) =>
  sts.filter((s) => s.Action.some((a) => a.startsWith("logs:")));
const GROUPS = "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/agent-rt-*";

describe("the runtimes' log groups in the platform's roles", () => {
  it("the deploy role may create them, set their retention and delete them, those only", () => {
    expect(logs(statements("deploy"))).toEqual([
      expect.objectContaining({
        Action: ["logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:PutRetentionPolicy"],
        Resource: [GROUPS],
      }),
    ]);
  });
  it("no other platform role touches log groups", () => {
    for (const id of roles.keys()) if (id !== "deploy") expect(logs(statements(id)), id).toEqual([]);
  });
  it("the tasks' role may list functions (to find runtimes on an older layer): ListFunctions names no resource", () => {
    const list = statements("task").filter((s) => s.Action.includes("lambda:ListFunctions"));
    expect(list).toEqual([expect.objectContaining({ Action: ["lambda:ListFunctions"], Resource: ["*"] })]);
    expect(statements("deploy").filter((s) => s.Effect === "Allow" && s.Resource.includes("*"))).toEqual([]);
  });
});
