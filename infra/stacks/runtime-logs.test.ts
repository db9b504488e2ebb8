import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { describe, expect, it } from "vitest";
import { grantRuntimes } from "./agent-runtimes.ts";

// Issue 26: runtime log groups never expired, and runtimes kept an old layer after an upgrade. The deploy step makes each with a retention
// (shared/agent/runtime/log-group.ts): its role may create them and set their retention, the roles that delete
// deployments may delete them, and only the runtimes' groups.
function statements(grants: Parameters<typeof grantRuntimes>[2]) {
  const stack = new Stack(new App(), "S", { env: { account: "123456789012", region: "eu-west-1" } });
  const role = new Role(stack, "R", { assumedBy: new ServicePrincipal("lambda.amazonaws.com") });
  grantRuntimes(stack, role, grants);
  return Object.values(Template.fromStack(stack).findResources("AWS::IAM::Policy")).flatMap(
    (p) => p.Properties.PolicyDocument.Statement,
  );
}
const logs = (sts: any[]) => sts.filter((s) => [s.Action].flat().some((a: string) => a.startsWith("logs:")));
const GROUPS = {
  "Fn::Join": [
    "",
    ["arn:", { Ref: "AWS::Partition" }, ":logs:eu-west-1:123456789012:log-group:/aws/lambda/agent-rt-*"],
  ],
};

const BOUNDARY = "arn:aws:iam::123456789012:policy/agent-runtime-boundary";

describe("the runtimes' log groups in the platform's roles", () => {
  it("the deploy step may create them and set their retention, those only", () => {
    expect(logs(statements({ deploy: { boundaryArn: BOUNDARY } }))).toEqual([
      expect.objectContaining({
        Action: ["logs:CreateLogGroup", "logs:PutRetentionPolicy"],
        Resource: GROUPS,
      }),
    ]);
  });
  it("deleting a deployment may delete them; invoking may not touch them", () => {
    expect(logs(statements({ remove: true }))).toEqual([
      expect.objectContaining({ Action: "logs:DeleteLogGroup", Resource: GROUPS }),
    ]);
    expect(logs(statements({ invoke: true }))).toEqual([]);
  });
  it("the revision sweeper's role may list functions (to find runtimes on an older layer): ListFunctions names no resource", () => {
    const list = statements({ list: true }).filter((s) => [s.Action].flat().includes("lambda:ListFunctions"));
    expect(list).toEqual([expect.objectContaining({ Action: "lambda:ListFunctions", Resource: "*" })]);
    expect(statements({ invoke: true, remove: true }).filter((s) => s.Resource === "*")).toEqual([]);
  });
});
