import { afterAll, expect, it } from "vitest";
import { queryAll } from "../shared/aws/ddb.ts";
import { agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { deployedClient } from "./helpers/agents.ts";
import { auth, call, facts } from "./helpers/cloud.ts";
import { waitFor } from "./helpers/export.ts";
import { gitRepo, graphRepoFiles } from "./helpers/repos.ts";

// DELETE /v2/deployments/{id} also deletes what the deployment's agent server stored.
const repo = gitRepo(graphRepoFiles(["step"]));
afterAll(() => repo.remove());
const items = (table: "main" | "checkpoints", pk: string) =>
  queryAll(table, { KeyConditionExpression: "PK = :pk", values: { ":pk": pk }, ConsistentRead: true });

it("deleting a deployment deletes its threads, runs, checkpoints and assistants", async () => {
  const { deploymentId, client } = await deployedClient(facts, repo.dir, "purge");
  const thread = await client.threads.create();
  const out = (await client.runs.wait(thread.thread_id, "agent", { input: { text: "x" } })) as any;
  expect(out.text).toBe("x>step");
  const scope = `${facts.tenant_id}#${deploymentId}`;
  expect(await items("main", agentKeys.threadsPk(scope))).toHaveLength(1);
  expect((await items("checkpoints", checkpointPk(scope, thread.thread_id))).length).toBeGreaterThan(0);
  expect((await items("main", `AGENT#${scope}#ASSISTANT`)).length).toBeGreaterThan(0);

  expect((await call("DELETE", `/v2/deployments/${deploymentId}`, { headers: auth })).status).toBe(204);
  await waitFor("the agent data to go", async () => {
    const left = [
      ...(await items("main", agentKeys.threadsPk(scope))),
      ...(await items("checkpoints", checkpointPk(scope, thread.thread_id))),
      ...(await items("main", `AGENT#${scope}#ASSISTANT`)),
    ];
    return left.length === 0;
  });
});
