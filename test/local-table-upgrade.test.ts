import { createServer } from "node:http";
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTables } from "../infra/local/dynamodb.ts";
import { listen } from "../infra/local/http-util.ts";
import { operatorPrincipal } from "../infra/local/operator.ts";
import { mintRuntimeCredentials } from "../infra/local/policy-proxy/credentials.ts";
import { createPolicyProxy } from "../infra/local/policy-proxy/handler.ts";
import { moveAgentIndexEntries } from "../shared/agent/runs/agent-index.ts";
import { dynamo, resetClients } from "../shared/aws/clients.ts";
import { getItem, putItem, queryAll } from "../shared/aws/ddb.ts";
import { config } from "../shared/config.ts";
import { inFlightRevisions } from "../shared/control/revisions.ts";
import { ACTIVE_RUNS, AGENT_INDEX, agentKeys, CRONS_DUE, THREAD_TTL } from "../shared/records/agent.ts";
import { REVISIONS_INFLIGHT, revisionsPk } from "../shared/records/control.ts";
import { shardKey } from "../shared/records/shard.ts";
import { tableName } from "../shared/tables.ts";
import "./helpers/cloud.ts";

// Issue 25: agent records moved from the platform's GSI1 to an index of their own (AGENT1). A DATA_DIR made by
// an earlier version holds a main table without AGENT1 and agent items carrying GSI1 keys: the local cloud's
// start adds the index and moves those entries (infra/local/cloud.ts). Here on tables of their own in the
// shared DynamoDB Local, as an earlier version created them.
const suffix = crypto.randomUUID().slice(0, 8);
const saved = {
  main: process.env.TABLE_MAIN,
  runs: process.env.TABLE_RUNS,
  cp: process.env.TABLE_CHECKPOINTS,
};
process.env.TABLE_MAIN = `upgrade-main-${suffix}`;
process.env.TABLE_RUNS = `upgrade-runs-${suffix}`;
process.env.TABLE_CHECKPOINTS = `upgrade-checkpoints-${suffix}`;

// The cloud's policy proxy knows its own tables' keys, not these: a proxy of the test's own knows them (it reads the
// names above), in front of the same DynamoDB Local, and the operator's calls go there.
const cloudAws = {
  AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
  AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
  AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
};
const operator = operatorPrincipal(mintRuntimeCredentials());
const proxy = createServer(
  createPolicyProxy({
    principal: (id) => (id === operator.accessKeyId ? operator : undefined),
    upstream: inject("backends"),
    region: config.region,
  }),
);
beforeAll(async () => {
  const port = await listen(proxy, 0, "127.0.0.1");
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: operator.accessKeyId,
    AWS_SECRET_ACCESS_KEY: operator.secretAccessKey,
  });
  resetClients();
});

afterAll(async () => {
  for (const id of ["main", "runs", "checkpoints"] as const)
    await dynamo()
      .send(new DeleteTableCommand({ TableName: tableName(id) }))
      .catch(() => {});
  process.env.TABLE_MAIN = saved.main;
  process.env.TABLE_RUNS = saved.runs;
  process.env.TABLE_CHECKPOINTS = saved.cp;
  Object.assign(process.env, cloudAws);
  resetClients();
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
});

describe("a main table of an earlier version", () => {
  it("gets AGENT1 at start, and its agent records' GSI1 entries move there", async () => {
    const attrs = ["PK", "SK", "GSI1PK", "GSI1SK"].map((a) => ({
      AttributeName: a,
      AttributeType: "S" as const,
    }));
    await dynamo().send(
      new CreateTableCommand({
        TableName: tableName("main"),
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: attrs,
        KeySchema: [
          { AttributeName: "PK", KeyType: "HASH" },
          { AttributeName: "SK", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: "GSI1",
            KeySchema: [
              { AttributeName: "GSI1PK", KeyType: "HASH" },
              { AttributeName: "GSI1SK", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
      }),
    );
    const thread = { PK: agentKeys.threadsPk("t-1#d-1"), SK: "th-1" };
    const expires = "2030-01-01T00:00:00.000Z";
    await putItem("main", { ...thread, thread_id: "th-1", GSI1PK: THREAD_TTL.base, GSI1SK: expires });

    await createTables(dynamo());
    await createTables(dynamo()); // idempotent
    const table = (await dynamo().send(new DescribeTableCommand({ TableName: tableName("main") }))).Table;
    expect(table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(["AGENT1", "GSI1"]);

    expect(await moveAgentIndexEntries()).toBe(1);
    expect(await moveAgentIndexEntries()).toBe(0);
    const pk = shardKey(THREAD_TTL, "th-1");
    expect(await getItem("main", thread, true)).toMatchObject({ AGENT1PK: pk, AGENT1SK: expires });
    const due = await queryAll("main", {
      IndexName: AGENT_INDEX,
      KeyConditionExpression: "AGENT1PK = :pk",
      values: { ":pk": pk },
    });
    expect(due.map((i) => i.SK)).toEqual(["th-1"]);
  });

  // Issue 36: the runs table's indexes held every attribute (ALL); they hold keys and ids now. A data folder of
  // an earlier version gets them replaced at start, filled again from the table.
  it("replaces the runs table's ALL indexes by the narrow ones, and the index finds what the table holds", async () => {
    // The first test's start created the runs table as this version does: it is made again as an earlier one did.
    await dynamo()
      .send(new DeleteTableCommand({ TableName: tableName("runs") }))
      .catch(() => {});
    const keys = ["PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK"];
    await dynamo().send(
      new CreateTableCommand({
        TableName: tableName("runs"),
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: keys.map((a) => ({ AttributeName: a, AttributeType: "S" as const })),
        KeySchema: [
          { AttributeName: "PK", KeyType: "HASH" },
          { AttributeName: "SK", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: ["GSI1", "GSI2", "GSI3"].map((name) => ({
          IndexName: name,
          KeySchema: [
            { AttributeName: `${name}PK`, KeyType: "HASH" as const },
            { AttributeName: `${name}SK`, KeyType: "RANGE" as const },
          ],
          Projection: { ProjectionType: "ALL" as const },
        })),
      }),
    );
    const run = {
      PK: "t-1#r-1",
      SK: "run",
      id: "r-1",
      name: "chain",
      GSI2PK: "t-1#r-1",
      GSI2SK: "20300101T000000000000Zr-1",
    };
    await putItem("runs", run);

    await createTables(dynamo());
    await createTables(dynamo()); // idempotent
    const table = (await dynamo().send(new DescribeTableCommand({ TableName: tableName("runs") }))).Table;
    const projections = Object.fromEntries(
      (table?.GlobalSecondaryIndexes ?? []).map((i) => [
        i.IndexName,
        [i.Projection?.ProjectionType, [...(i.Projection?.NonKeyAttributes ?? [])].sort()],
      ]),
    );
    expect(projections).toEqual({
      GSI1: ["INCLUDE", ["id"]],
      GSI2: ["INCLUDE", ["id"]],
      GSI3: ["INCLUDE", ["first_start_time", "id", "last_start_time", "thread_id"]],
    });
    const found = await queryAll("runs", {
      IndexName: "GSI2",
      KeyConditionExpression: "GSI2PK = :pk",
      values: { ":pk": run.GSI2PK },
    });
    // What the index holds of the run now: its keys and id, not the rest.
    expect(found).toEqual([{ PK: run.PK, SK: run.SK, GSI2PK: run.GSI2PK, GSI2SK: run.GSI2SK, id: "r-1" }]);
    // Three indexes deleted and built again, one at a time, each waited for: seconds alone, minutes on the shared
    // DynamoDB Local while the other files' tests load it (a fresh-clone run took over 120 s).
  }, 400_000);

  // Issue 26: the constant partitions every tenant wrote (one index partition: 1,000 WCU/s) became shards.
  it("moves the entries the last version left under one constant key each to their shards", async () => {
    const scope = "t-1#d-1";
    const run = { PK: agentKeys.runsPk(scope, "th-2"), SK: "run-1" };
    const runSk = `${scope}#th-2#run-1`;
    await putItem("main", {
      ...run,
      thread_id: "th-2",
      run_id: "run-1",
      status: "pending",
      AGENT1PK: ACTIVE_RUNS.base,
      AGENT1SK: runSk,
    });
    const cron = { PK: agentKeys.cronsPk(scope), SK: "cron-1" };
    const cronSk = `2030-01-01T00:00:00.000Z#${scope}#cron-1`;
    await putItem("main", { ...cron, cron_id: "cron-1", AGENT1PK: CRONS_DUE.base, AGENT1SK: cronSk });
    const revision = {
      PK: revisionsPk("t-1", "d-1"),
      SK: "REV#rev-1",
      id: "rev-1",
      tenant_id: "t-1",
      deployment_id: "d-1",
      status: "AWAITING_BUILD",
    };
    await putItem("main", { ...revision, GSI1PK: REVISIONS_INFLIGHT.base, GSI1SK: "rev-1" });

    expect(await moveAgentIndexEntries()).toBe(3);
    expect(await moveAgentIndexEntries()).toBe(0);
    expect(await getItem("main", run, true)).toMatchObject({
      AGENT1PK: shardKey(ACTIVE_RUNS, "run-1"),
      AGENT1SK: runSk,
    });
    expect(await getItem("main", cron, true)).toMatchObject({
      AGENT1PK: shardKey(CRONS_DUE, "cron-1"),
      AGENT1SK: cronSk,
    });
    expect(await getItem("main", { PK: revision.PK, SK: revision.SK }, true)).toMatchObject({
      GSI1PK: shardKey(REVISIONS_INFLIGHT, "rev-1"),
      GSI1SK: "rev-1",
    });
    expect((await inFlightRevisions()).map((r) => r.id)).toEqual(["rev-1"]);
  });
});
