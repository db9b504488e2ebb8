import { InvokeCommand } from "@aws-sdk/client-lambda";
import { afterAll, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { lambda } from "../shared/aws/clients.ts";
import { queryAll, transact } from "../shared/aws/ddb.ts";
import { agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { deploymentNames, deploymentPurges, deployments } from "../shared/records/control.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

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

it("a DELETE retried answers 204 again; an unknown deployment 404", async () => {
  const { deploymentId } = await deployedClient(facts, repo.dir, "purge-retry");
  const del = () => call("DELETE", `/v2/deployments/${deploymentId}`, { headers: auth });
  expect((await del()).status).toBe(204);
  expect((await del()).status).toBe(204);
  expect((await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).status).toBe(404);
  await waitFor("the tombstone to be done", async () =>
    Boolean((await deploymentPurges.get({ tenant: facts.tenant_id, id: deploymentId }, true))?.done_at),
  );
  expect((await del()).status).toBe(204);
  expect((await call("DELETE", `/v2/deployments/${crypto.randomUUID()}`, { headers: auth })).status).toBe(
    404,
  );
});

it("a DELETE that stopped after its tombstone (a crash) is finished by the control plane's sweeper", async () => {
  const { deploymentId, client } = await deployedClient(facts, repo.dir, "purge-crash");
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "agent", { input: { text: "x" } });
  const scope = `${facts.tenant_id}#${deploymentId}`;
  const tenant = facts.tenant_id;
  const d = (await deployments.get({ tenant, id: deploymentId }, true))!;
  // What DELETE's transaction leaves when the process dies right after it: the tombstone, no record, no name.
  await transact([
    {
      Put: deploymentPurges.putInput({
        tenant_id: tenant,
        deployment_id: deploymentId,
        tracing_project_id: d.tracing_project_id ?? null,
        delete_tracing_project: false,
        created_at: new Date(Date.now() - 10 * 60_000).toISOString(),
      }),
    },
    { Delete: deploymentNames.deleteInput({ tenant, name: d.name }) },
    { Delete: deployments.deleteInput({ tenant, id: deploymentId }) },
  ]);
  expect((await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).status).toBe(404);
  expect(await items("main", agentKeys.threadsPk(scope))).toHaveLength(1);

  const out = await lambda().send(new InvokeCommand({ FunctionName: "RevisionSweeper", Payload: "{}" }));
  expect(out.FunctionError).toBeUndefined();
  expect(JSON.parse(Buffer.from(out.Payload!).toString()).purges_resumed).toContain(deploymentId);
  await waitFor("the agent data to go and the tombstone to be done", async () => {
    const left = [
      ...(await items("main", agentKeys.threadsPk(scope))),
      ...(await items("checkpoints", checkpointPk(scope, thread.thread_id))),
    ];
    const tomb = await deploymentPurges.get({ tenant, id: deploymentId }, true);
    return left.length === 0 && Boolean(tomb?.done_at);
  });
});
