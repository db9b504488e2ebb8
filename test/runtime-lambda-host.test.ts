import { DescribeLogGroupsCommand } from "@aws-sdk/client-cloudwatch-logs";
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
} from "@aws-sdk/client-iam";
import {
  DeleteFunctionCommand,
  DeleteFunctionConcurrencyCommand,
  GetFunctionCommand,
  PutFunctionConcurrencyCommand,
} from "@aws-sdk/client-lambda";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { localRuntimeScope } from "../infra/local/policy-proxy/credentials.ts";
import { redeployMissingRuntimes } from "../infra/local/runtime-versions.ts";
import { iam, lambdaControl, logs } from "../shared/aws/clients.ts";
import { runtimePolicy, runtimeTrustPolicy } from "../shared/containment/runtime-policy.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 35, Deliver 1: a deployment's runtime is the function the deploy step (lambda-host.ts) creates through the
// local cloud's Lambda, IAM and CloudWatch Logs APIs, under the deploy role's generated policy; the local Lambda
// service runs it and holds it to its reserved concurrency.
const GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ done: Annotation() });
export const graph = new StateGraph(State)
  .addNode("slow", async () => { await new Promise((r) => setTimeout(r, 6000)); return { done: true }; })
  .addEdge(START, "slow").compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": GRAPH,
});
let client: Client;
let deploymentId: string;
const fn = () => `agent-rt-${deploymentId}`;

beforeAll(async () => {
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "lambda-host"));
}, 180_000);
afterAll(() => repo.remove());

describe("the runtime is a function the deploy step created", () => {
  it("its function version, role (path, boundary, inline policy) and log group come from the APIs", async () => {
    const d = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json;
    const live = await lambdaControl().send(new GetFunctionCommand({ FunctionName: fn(), Qualifier: "1" }));
    expect(live.Configuration?.Version).toBe("1");
    expect(live.Configuration?.Role).toMatch(new RegExp(`:role/agent-runtime/${fn()}$`));
    expect(live.Configuration?.Layers?.map((l) => l.Arn)).toEqual([
      expect.stringMatching(/:layer:agent-runtime:1$/),
    ]);
    const settings = JSON.parse(live.Configuration?.Environment?.Variables?.AGENT_RUNTIME_CONFIG ?? "{}");
    expect(settings).toMatchObject({ deployment_id: deploymentId, revision_id: d.latest_revision_id });
    const role = (await iam().send(new GetRoleCommand({ RoleName: fn() }))).Role!;
    expect(role.Path).toBe("/agent-runtime/");
    expect(role.PermissionsBoundary?.PermissionsBoundaryArn).toMatch(/:policy\/agent-runtime-boundary$/);
    const policy = await iam().send(new GetRolePolicyCommand({ RoleName: fn(), PolicyName: "runtime" }));
    expect(JSON.parse(decodeURIComponent(policy.PolicyDocument!))).toEqual(
      runtimePolicy(localRuntimeScope(facts.tenant_id, deploymentId)),
    );
    const groups = await logs().send(
      new DescribeLogGroupsCommand({ logGroupNamePrefix: `/aws/lambda/${fn()}` }),
    );
    expect(groups.logGroups?.map((g) => [g.logGroupName, g.retentionInDays])).toEqual([
      [`/aws/lambda/${fn()}`, expect.any(Number)],
    ]);
  });
});

describe("reserved concurrency, enforced locally", () => {
  it("a third concurrent stream on a runtime reserved at 2 is the router's 429 with Retry-After", async () => {
    await lambdaControl().send(
      new PutFunctionConcurrencyCommand({ FunctionName: fn(), ReservedConcurrentExecutions: 2 }),
    );
    try {
      const streams = await Promise.all(
        [1, 2].map(async () => {
          const t = await client.threads.create();
          const it = client.runs
            .stream(t.thread_id, "agent", { input: {}, streamMode: "values" })
            [Symbol.asyncIterator]();
          await it.next(); // the metadata event: this stream holds its slot now
          return it;
        }),
      );
      const third = await call("GET", `/agents/${deploymentId}/info`, { headers: auth });
      expect(third.status).toBe(429);
      // Lambda's throttle of the runtime, not the workspace's rate limit.
      expect(third.json.detail).toMatch(/the deployment's runtime \(its concurrent requests\)/);
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
      for (const s of streams) while (!(await s.next()).done);
      // Both ended: their slots are free again.
      expect((await call("GET", `/agents/${deploymentId}/info`, { headers: auth })).status).toBe(200);
    } finally {
      await lambdaControl().send(new DeleteFunctionConcurrencyCommand({ FunctionName: fn() }));
    }
  }, 60_000);
});

describe("a data folder from before runtimes were functions", () => {
  it("a live deployment without its function gets its active revision redeployed, which creates it", async () => {
    await lambdaControl().send(new DeleteFunctionCommand({ FunctionName: fn() }));
    const before = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json;
    expect(await redeployMissingRuntimes()).toBeGreaterThanOrEqual(1);
    const after = await waitFor(
      "the redeploy to go live",
      async () => {
        const d = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json;
        return d.latest_revision_id !== before.latest_revision_id &&
          d.active_revision_id === d.latest_revision_id
          ? d
          : undefined;
      },
      90_000,
      250,
    );
    const revision = (
      await call("GET", `/v2/deployments/${deploymentId}/revisions/${after.latest_revision_id}`, {
        headers: auth,
      })
    ).json;
    expect(revision.redeploy_of).toBe(before.latest_revision_id);
    const live = await lambdaControl().send(new GetFunctionCommand({ FunctionName: fn(), Qualifier: "1" }));
    expect(live.Configuration?.Version).toBe("1");
    expect((await call("GET", `/agents/${deploymentId}/info`, { headers: auth })).status).toBe(200);
  }, 120_000);
});

describe("the deploy step's IAM and Lambda calls are evaluated under the deploy role's policy", () => {
  it("a denied call fails the deploy: a role of the runtime's name outside /agent-runtime/ is not the deploy role's to bound", async () => {
    // Someone else's role squats the runtime's name at another path (the operator may; the deploy role may not).
    await iam().send(new DeleteRolePolicyCommand({ RoleName: fn(), PolicyName: "runtime" }));
    await iam().send(new DeleteRoleCommand({ RoleName: fn() }));
    await iam().send(
      new CreateRoleCommand({
        RoleName: fn(),
        Path: "/",
        AssumeRolePolicyDocument: JSON.stringify(runtimeTrustPolicy("000000000000")),
      }),
    );
    const d = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json;
    const r = await call(
      "POST",
      `/v2/deployments/${deploymentId}/revisions/${d.latest_revision_id}/redeploy`,
      {
        headers: auth,
      },
    );
    expect(r.status).toBe(200);
    const failed = await waitFor(
      "the redeploy to end",
      async () => {
        const rev = (
          await call("GET", `/v2/deployments/${deploymentId}/revisions/${r.json.latest_revision_id}`, {
            headers: auth,
          })
        ).json;
        return /DEPLOYED|FAILED/.test(rev?.status ?? "") ? rev : undefined;
      },
      90_000,
      250,
    );
    expect(failed.status).toBe("DEPLOY_FAILED");
    expect(failed.error).toMatch(
      new RegExp(
        `not authorized to perform: iam:PutRolePermissionsBoundary on resource: arn:aws:iam::000000000000:role/${fn()}`,
      ),
    );
  }, 120_000);
});
