import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { copyThread, deleteByRunId, keepLatest } from "../shared/agent/checkpoint/admin.ts";
import { placeParts, readPart } from "../shared/agent/checkpoint/blobs.ts";
import { purgeDeploymentData } from "../shared/agent/cleanup/purge.ts";
import { sweepExpiredThreads } from "../shared/agent/cleanup/thread-ttl.ts";
import { s3 } from "../shared/aws/clients.ts";
import { putItem, queryAll } from "../shared/aws/ddb.ts";
import { agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { s3ThreadPrefix } from "../shared/records/checkpoint-keys.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// secreview4, tried live: a deployment's runtime may write any attribute of the checkpoint items in its own
// partitions (its role's LeadingKeys), and a graph can take its runtime's keys from its own process. Checkpoint
// items name their S3 parts as `<attr>_ref`, and the platform deletes what they name with a role that reaches every
// workspace's objects — the thread-TTL sweep, a deployment's purge, a rollback by the run sweeper. The graph wrote
// `value_ref: checkpoints/<victim workspace>%23<its deployment>/<thread>/…` into an item of its own thread with a
// one-minute TTL; the platform's sweep deleted the other workspace's checkpoint blob, and that thread's state answered
// 500 from then on. Now a reference counts only under the thread prefix the item's own key builds (`ownRef` in
// shared/agent/checkpoint/blobs.ts): others are not deleted, copied or read. (On the code before the fix, every
// test fails: the victim's objects are gone, or copied.)

const bucket = process.env.PLATFORM_BUCKET!;
const exists = (Key: string) =>
  s3()
    .send(new HeadObjectCommand({ Bucket: bucket, Key }))
    .then(
      () => true,
      (e: { name?: string }) => (e.name === "NotFound" || e.name === "NoSuchKey" ? false : Promise.reject(e)),
    );

/** Another workspace's checkpoint part, as its runtime stores it: its key and the item naming it. */
async function victimPart() {
  const scope = `${crypto.randomUUID()}#${crypto.randomUUID()}`;
  const thread = crypto.randomUUID();
  const key = `${s3ThreadPrefix(scope, thread)}%/1f0/values/messages`;
  const item: Record<string, unknown> = { PK: checkpointPk(scope, thread), SK: "C#%#1f0#V#messages" };
  await placeParts(item, [{ attr: "value", bytes: new Uint8Array(2048).fill(7), key }], 0);
  expect(await exists(key)).toBe(true);
  return { key, item };
}

/** The forged references a hostile runtime puts on an item of its own thread: the other workspace's key. */
const forged = (victim: string) => ({ value_ref: victim, checkpoint_ref: victim, metadata_ref: victim });

let repo: ReturnType<typeof gitRepo>;
let deploymentId: string;
let client: Client;
beforeAll(async () => {
  repo = gitRepo(graphRepoFiles(["a"]));
  ({ deploymentId } = await deployRepo(repo.dir, "refs", call, auth));
  client = new Client({ apiUrl: `${base}/agents/${deploymentId}`, apiKey: facts.api_key });
}, 240_000);
afterAll(() => repo?.remove());

describe("checkpoint items naming another workspace's S3 objects", () => {
  it("the thread-TTL sweep (the platform's role) deletes the thread's own parts, never another workspace's", async () => {
    const victim = await victimPart();
    const scope = `${facts.tenant_id}#${deploymentId}`;
    const t = await client.threads.create({ ttl: { ttl: 0.05, strategy: "delete" } });
    const own = s3ThreadPrefix(scope, t.thread_id);
    // Its own part, which the sweep must still delete.
    const mine: Record<string, unknown> = {
      PK: checkpointPk(scope, t.thread_id),
      SK: "C#%#zz#V#big",
      kind: "value",
    };
    await placeParts(mine, [{ attr: "value", bytes: new Uint8Array(1024), key: `${own}%/zz/values/big` }], 0);
    await putItem("checkpoints", mine);
    // Written as the runtime's role may: an item of its own thread's partition.
    await putItem("checkpoints", {
      PK: checkpointPk(scope, t.thread_id),
      SK: "C#%#zz#V#forged",
      kind: "value",
      ...forged(victim.key),
    });
    await new Promise((r) => setTimeout(r, 3500));
    await sweepExpiredThreads();
    await expect(client.threads.get(t.thread_id)).rejects.toThrow(/404/);
    const left = await queryAll("checkpoints", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": checkpointPk(scope, t.thread_id) },
      ConsistentRead: true,
    });
    expect(left).toEqual([]);
    expect(await exists(`${own}%/zz/values/big`)).toBe(false);
    expect(await exists(victim.key)).toBe(true);
    expect(await readPart(victim.item, "value")).toEqual(new Uint8Array(2048).fill(7));
  }, 60_000);

  it("a deployment's purge (the purge task's role) leaves another workspace's objects its items name", async () => {
    const victim = await victimPart();
    const tenant = crypto.randomUUID();
    const deployment = crypto.randomUUID();
    const scope = `${tenant}#${deployment}`;
    const thread = crypto.randomUUID();
    await putItem("main", { PK: agentKeys.threadsPk(scope), SK: thread });
    await putItem("checkpoints", {
      PK: checkpointPk(scope, thread),
      SK: "C#%#1#V#x",
      kind: "value",
      ...forged(victim.key),
    });
    await purgeDeploymentData(tenant, deployment);
    expect(await exists(victim.key)).toBe(true);
  });

  it("a rollback (the run sweeper finishing a cancelled run) and keep_latest leave them too", async () => {
    const victim = await victimPart();
    const scope = `${crypto.randomUUID()}#${crypto.randomUUID()}`;
    const thread = crypto.randomUUID();
    const run = crypto.randomUUID();
    const head = (id: string, extra: Record<string, unknown>) => ({
      PK: checkpointPk(scope, thread),
      SK: `C#%#${id}`,
      kind: "checkpoint",
      checkpoint_ns: "",
      checkpoint_id: id,
      ...extra,
    });
    await putItem("checkpoints", head("1", { run_id: run, ...forged(victim.key) }));
    await putItem("checkpoints", head("2", { run_id: crypto.randomUUID() }));
    await putItem("checkpoints", head("0", { metadata_ref: victim.key }));
    expect(await deleteByRunId(scope, thread, run)).toBe(1);
    expect(await exists(victim.key)).toBe(true);
    expect(await keepLatest(scope, thread)).toBe(1);
    expect(await exists(victim.key)).toBe(true);
  });

  it("a copy of the thread drops a foreign reference instead of copying the object; a read of one is refused", async () => {
    const victim = await victimPart();
    const scope = `${crypto.randomUUID()}#${crypto.randomUUID()}`;
    const from = crypto.randomUUID();
    const to = crypto.randomUUID();
    await putItem("checkpoints", {
      PK: checkpointPk(scope, from),
      SK: "C#%#1#V#x",
      kind: "value",
      value_ref: victim.key,
    });
    await copyThread(scope, from, to, async (h) => h);
    const copies = await queryAll("checkpoints", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": checkpointPk(scope, to) },
      ConsistentRead: true,
    });
    expect(copies).toHaveLength(1);
    expect(copies[0]).not.toHaveProperty("value_ref");
    // Read: the other workspace's key, or one under the item's own prefix that climbs out with `..`.
    const own = s3ThreadPrefix(scope, from);
    for (const ref of [victim.key, `${own}../../${victim.key.slice("checkpoints/".length)}`]) {
      const forgedItem = { PK: checkpointPk(scope, from), SK: "C#%#1#V#x", value_ref: ref };
      await expect(readPart(forgedItem, "value"), ref).rejects.toThrow(/outside its thread/);
    }
  });
});
