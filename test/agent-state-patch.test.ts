import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 9: PATCH /threads/{thread_id}/state, the SDK's threads.patchState: merges metadata into the
// metadata of the thread's latest checkpoint.
let repo: { dir: string; remove: () => void };
let deploymentId: string;
let client: Client;
const path = (p: string) => `/agents/${deploymentId}${p}`;

beforeAll(async () => {
  repo = gitRepo(graphRepoFiles(["greet"]));
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "state-patch"));
}, 240_000);

afterAll(() => repo?.remove());

describe("PATCH /threads/{thread_id}/state", () => {
  it("merges metadata into the latest checkpoint's; earlier checkpoints and the values stay", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", { input: { text: "a" } });
    const before = await client.threads.getState(thread.thread_id);
    expect(before.metadata).toMatchObject({ source: "loop" });

    await client.threads.patchState(thread.thread_id, { reviewed: true, reviewer: "ann" });
    const after = await client.threads.getState(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.values).toEqual(before.values);
    expect(after.metadata).toEqual({ ...before.metadata, reviewed: true, reviewer: "ann" });

    // The config form names the thread; the latest checkpoint is patched again (a merge: `reviewed` stays).
    await client.threads.patchState({ configurable: { thread_id: thread.thread_id } }, { reviewer: "bob" });
    expect((await client.threads.getState(thread.thread_id)).metadata).toMatchObject({
      reviewed: true,
      reviewer: "bob",
    });
    const [latest, parent] = await client.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(latest!.metadata).toMatchObject({ reviewer: "bob" });
    expect(parent!.metadata).not.toHaveProperty("reviewer");
    // History filtered by the patched metadata finds it.
    const found = await client.threads.getHistory(thread.thread_id, { metadata: { reviewer: "bob" } });
    expect(found.map((s) => s.checkpoint.checkpoint_id)).toEqual([before.checkpoint.checkpoint_id]);
  });

  it("answers 204; an unknown thread is 404; a body without metadata object is 422", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", { input: { text: "a" } });
    const ok = await call("PATCH", path(`/threads/${thread.thread_id}/state`), {
      headers: auth,
      body: { metadata: { a: 1 } },
    });
    expect(ok.status).toBe(204);
    const unknown = crypto.randomUUID();
    await expect(client.threads.patchState(unknown, { a: 1 })).rejects.toMatchObject({ status: 404 });
    for (const body of [{}, { metadata: "x" }, { metadata: [1] }]) {
      const r = await call("PATCH", path(`/threads/${thread.thread_id}/state`), { headers: auth, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("a thread without state yet answers 400 saying so", async () => {
    const thread = await client.threads.create();
    const r = await call("PATCH", path(`/threads/${thread.thread_id}/state`), {
      headers: auth,
      body: { metadata: { a: 1 } },
    });
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/no state yet/);
  });
});
