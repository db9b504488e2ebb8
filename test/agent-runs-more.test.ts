import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient, runStatusSoon } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { type FakeServer, fakeServer, type Seen } from "../harness/fake-http.ts";
import { gitRepo } from "../harness/repos.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 6, the rest of the threads and runs API (prune, state at a checkpoint object, the thread's stream, bulk
// cancel, batches of stateless runs, webhooks) through the real @langchain/langgraph-sdk Client. `slow` takes
// 300 ms; `hold` 2 s, so a run to be cancelled is surely still running when the cancel lands.
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const slow = new StateGraph(State)
  .addNode("work", async () => { await sleep(300); return { items: ["work"] }; })
  .addNode("done", async () => ({ items: ["done"] }))
  .addEdge(START, "work").addEdge("work", "done").addEdge("done", END).compile();
export const hold = new StateGraph(State)
  .addNode("wait", async () => { await sleep(2000); return { items: ["held"] }; })
  .addEdge(START, "wait").addEdge("wait", END).compile();
export const boom = new StateGraph(State)
  .addNode("fail", async () => { throw new Error("kaput"); })
  .addEdge(START, "fail").addEdge("fail", END).compile();
`;
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: { slow: "./src/graph.mjs:slow", hold: "./src/graph.mjs:hold", boom: "./src/graph.mjs:boom" },
    env: {},
  }),
  "src/graph.mjs": GRAPH,
};

let client: Client;
let deploymentId: string;
const repo = gitRepo(FILES);
const hooks: FakeServer[] = [];
afterAll(async () => {
  repo.remove();
  await Promise.all(hooks.map((h) => h.close()));
});

beforeAll(async () => {
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "runs-more"));
});

const agent = (path: string, body?: unknown) =>
  call(body === undefined ? "GET" : "POST", `/agents/${deploymentId}${path}`, { headers: auth, body });

type Part = { id?: string; event: string; data: any };
/** Reads a never-ending stream until `ends` runs have ended, then leaves (a stuck stream fails after 20 s). */
async function untilEnds(
  open: (signal: AbortSignal) => AsyncIterable<Part>,
  ends: number,
  onPart: (part: Part) => void = () => {},
): Promise<Part[]> {
  const ac = new AbortController();
  const guard = setTimeout(() => ac.abort(), 20_000);
  const out: Part[] = [];
  try {
    for await (const part of open(ac.signal)) {
      out.push(part);
      onPart(part);
      if (out.filter((p) => p.event === "end").length >= ends) break;
    }
  } finally {
    clearTimeout(guard);
    ac.abort();
  }
  return out;
}

const statusOf = async (threadId: string, runId: string) => (await client.runs.get(threadId, runId)).status;
const runningSoon = (threadId: string, runId: string) => runStatusSoon(client, threadId, runId, "running");
const statusSoon = (threadId: string, runId: string, status: string) =>
  runStatusSoon(client, threadId, runId, status, 10_000, 50);

async function hook(answer: (req: Seen, n: number) => number = () => 200): Promise<FakeServer> {
  let n = 0;
  const h = await fakeServer((req) => ({ status: answer(req, n++) }));
  hooks.push(h);
  return h;
}
const received = (h: FakeServer, count = 1) =>
  waitFor(
    "the webhook",
    async () => h.seen.length >= count && h.seen.map((s) => JSON.parse(s.body)),
    10_000,
    50,
  );

describe("POST /threads/prune", () => {
  it("delete deletes the threads as DELETE /threads/{id} does; missing ids are not counted", async () => {
    const a = await client.threads.create();
    const b = await client.threads.create();
    const run = await client.runs.create(a.thread_id, "slow", { input: { items: ["p"] } });
    await client.runs.join(a.thread_id, run.run_id);
    const out = await client.threads.prune([a.thread_id, b.thread_id, crypto.randomUUID()]);
    expect(out).toEqual({ pruned_count: 2 });
    await expect(client.threads.get(a.thread_id)).rejects.toThrow(/404/);
    await expect(client.threads.get(b.thread_id)).rejects.toThrow(/404/);
    await expect(client.runs.get(a.thread_id, run.run_id)).rejects.toThrow(/404/);
  });

  it("keep_latest keeps the thread and its latest state and deletes every older checkpoint", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "slow", { input: { items: ["a"] } });
    await client.runs.wait(t.thread_id, "slow", { input: { items: ["b"] } });
    const latest = await client.threads.getState(t.thread_id);
    expect((await client.threads.getHistory(t.thread_id, { limit: 100 })).length).toBeGreaterThan(4);
    const out = await client.threads.prune([t.thread_id], { strategy: "keep_latest" });
    expect(out).toEqual({ pruned_count: 1 });
    const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
    expect(history).toHaveLength(1);
    expect(history[0].checkpoint.checkpoint_id).toBe(latest.checkpoint.checkpoint_id);
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["a", "work", "done", "b", "work", "done"],
    });
    expect(await client.runs.wait(t.thread_id, "slow", { input: { items: ["c"] } })).toEqual({
      items: ["a", "work", "done", "b", "work", "done", "c", "work", "done"],
    });
  });

  it("a bad body answers 422 with detail items", async () => {
    for (const body of [{}, { thread_ids: "x" }, { thread_ids: [], strategy: "nope" }]) {
      const r = await agent("/threads/prune", body);
      expect(r.status).toBe(422);
      expect(r.json.detail[0]).toMatchObject({
        loc: expect.arrayContaining(["body"]),
        msg: expect.any(String),
      });
    }
  });
});

describe("POST /threads/{thread_id}/state/checkpoint", () => {
  it("getState with a checkpoint object answers the state at that checkpoint", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "slow", { input: { items: ["s"] } });
    const history = await client.threads.getHistory(t.thread_id);
    const at = await client.threads.getState(t.thread_id, history[1].checkpoint);
    expect(at.values).toEqual({ items: ["s", "work"] });
    expect(at.checkpoint.checkpoint_id).toBe(history[1].checkpoint.checkpoint_id);
    expect(at).toEqual(await client.threads.getState(t.thread_id, history[1].checkpoint.checkpoint_id!));
    const r = await agent(`/threads/${t.thread_id}/state/checkpoint`, { subgraphs: true });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["body", "checkpoint"]);
  });
});

describe("GET /threads/{thread_id}/stream", () => {
  it("follows each run of the thread as it happens, one after the other, ids `<run_id>:<n>` with n from 0", async () => {
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["a"] },
      streamMode: "updates",
    });
    // The next run is made once the stream follows the first (its first part): a 300 ms run can end before a
    // status poll on a loaded machine sees it running.
    let following!: () => void;
    const followed = new Promise<void>((resolve) => {
      following = resolve;
    });
    const parts = untilEnds(
      (signal) => client.threads.joinStream(t.thread_id, { signal }),
      2,
      () => following(),
    );
    await followed;
    const b = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["b"] },
      streamMode: "values",
    });
    const got = await parts;
    const ofRun = (id: string) => got.filter((p) => p.id?.startsWith(`${id}:`));
    expect(ofRun(a.run_id).map((p) => p.event)).toEqual(["metadata", "updates", "updates", "end"]);
    expect(ofRun(b.run_id).map((p) => p.event)).toEqual(["metadata", "values", "values", "values", "end"]);
    expect(got).toHaveLength(9);
    expect(got[0]).toMatchObject({ id: `${a.run_id}:0`, data: { run_id: a.run_id } });
    expect(got[3]).toEqual({
      id: `${a.run_id}:end`,
      event: "end",
      data: { run_id: a.run_id, status: "success" },
    });
    expect(got[7].data).toEqual({ items: ["a", "work", "done", "b", "work", "done"] });
    expect(got[8].data).toEqual({ run_id: b.run_id, status: "success" });
  });

  it("lifecycle sends each run's start and end; state_update the thread's state after it", async () => {
    const t = await client.threads.create();
    // Joined while the thread is idle: the stream waits for the thread's next run.
    const parts = untilEnds(
      (signal) =>
        client.threads.joinStream(t.thread_id, { signal, streamMode: ["lifecycle", "state_update"] }),
      1,
    );
    const run = await client.runs.create(t.thread_id, "hold", {
      input: { items: ["l"] },
      streamMode: ["values", "updates"],
    });
    const got = await parts;
    expect(got.map((p) => p.event)).toEqual(["metadata", "values", "end"]);
    expect(got[0].data).toMatchObject({ run_id: run.run_id });
    expect(got[1]).toEqual({ id: `${run.run_id}:state`, event: "values", data: { items: ["l", "held"] } });
    expect(got[2].data).toEqual({ run_id: run.run_id, status: "success" });
  });

  it("Last-Event-ID resumes after the event it names; `-` replays every stored run", async () => {
    const t = await client.threads.create();
    for (const item of ["a", "b"]) {
      const run = await client.runs.create(t.thread_id, "slow", {
        input: { items: [item] },
        streamMode: "updates",
      });
      await client.runs.join(t.thread_id, run.run_id);
    }
    const join = (lastEventId: string, ends: number) =>
      untilEnds((signal) => client.threads.joinStream(t.thread_id, { signal, lastEventId }), ends);
    const all = await join("-", 2);
    expect(all.map((p) => p.event)).toEqual([
      ...["metadata", "updates", "updates", "end"],
      ...["metadata", "updates", "updates", "end"],
    ]);
    expect(await join(all[1].id!, 2)).toEqual(all.slice(2));
    expect(await join(all[3].id!, 1)).toEqual(all.slice(4));
  });

  it("an unknown thread answers 404, an unknown stream_mode 422", async () => {
    await expect(collect(client.threads.joinStream(crypto.randomUUID()))).rejects.toThrow(/404/);
    const t = await client.threads.create();
    const r = await agent(`/threads/${t.thread_id}/stream?stream_mode=run_modes,bogus`);
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["query", "stream_mode", 1]);
  });
});

describe("POST /runs/cancel", () => {
  it("by thread_id interrupts the thread's running and pending runs", async () => {
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "hold", { input: { items: ["a"] } });
    await runningSoon(t.thread_id, a.run_id);
    const b = await client.runs.create(t.thread_id, "slow", { input: { items: ["b"] } });
    await client.runs.cancelMany({ threadId: t.thread_id });
    expect(await statusOf(t.thread_id, b.run_id)).toBe("interrupted");
    await statusSoon(t.thread_id, a.run_id, "interrupted");
  });

  it("status pending cancels only the pending runs", async () => {
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "slow", { input: { items: ["a"] } });
    await runningSoon(t.thread_id, a.run_id);
    const b = await client.runs.create(t.thread_id, "slow", { input: { items: ["b"] } });
    await client.runs.cancelMany({ threadId: t.thread_id, status: "pending" });
    expect(await statusOf(t.thread_id, b.run_id)).toBe("interrupted");
    expect(await client.runs.join(t.thread_id, a.run_id)).toEqual({ items: ["a", "work", "done"] });
  });

  it("run_ids with action rollback deletes the listed runs only, on any thread", async () => {
    const t1 = await client.threads.create();
    const t2 = await client.threads.create();
    const a = await client.runs.create(t1.thread_id, "hold", { input: { items: ["a"] } });
    const c = await client.runs.create(t2.thread_id, "slow", { input: { items: ["c"] } });
    await runningSoon(t1.thread_id, a.run_id);
    await client.runs.cancelMany({ runIds: [a.run_id], action: "rollback" });
    await waitFor(
      "the rolled-back run to be gone",
      async () => (await agent(`/threads/${t1.thread_id}/runs/${a.run_id}`)).status === 404,
      10_000,
      50,
    );
    expect((await client.threads.getState(t1.thread_id)).values).toEqual({});
    expect(await client.runs.join(t2.thread_id, c.run_id)).toEqual({ items: ["c", "work", "done"] });
  });

  it("no filter answers 422; an unknown thread 404", async () => {
    const r = await agent("/runs/cancel", {});
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["body"]);
    expect((await agent("/runs/cancel", { status: "done" })).status).toBe(422);
    expect((await agent("/runs/cancel?action=explode", { status: "all" })).status).toBe(422);
    await expect(client.runs.cancelMany({ threadId: crypto.randomUUID() })).rejects.toThrow(/404/);
  });
});

describe("POST /runs/batch", () => {
  it("createBatch creates stateless background runs, answered in order, which then run", async () => {
    const runs = await client.runs.createBatch([
      { assistantId: "slow", input: { items: ["1"] }, metadata: { n: 1 } },
      { assistantId: "slow", input: { items: ["2"] }, metadata: { n: 2 }, multitaskStrategy: "interrupt" },
    ]);
    // The SDK sends a batch's camelCase keys as they are: multitaskStrategy counts as multitask_strategy.
    expect(runs.map((r) => [r.status, r.metadata, r.multitask_strategy])).toEqual([
      ["pending", { n: 1 }, "enqueue"],
      ["pending", { n: 2 }, "interrupt"],
    ]);
    expect(runs[0].thread_id).not.toBe(runs[1].thread_id);
    // A stateless run's thread goes, with the run's own record, once the run ended: its deletion says it ran.
    for (const r of runs)
      await waitFor(
        "the stateless thread to be deleted",
        async () => (await agent(`/threads/${r.thread_id}`)).status === 404,
        10_000,
        50,
      );
  });

  it("a bad item answers 422 naming it; an unknown assistant creates no run", async () => {
    const r = await agent("/runs/batch", [{ assistant_id: "slow" }, { input: {} }]);
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["body", 1, "assistant_id"]);
    expect((await agent("/runs/batch", { assistant_id: "slow" })).status).toBe(422);
    const before = new Date().toISOString();
    await expect(
      client.runs.createBatch([{ assistantId: "slow", input: { items: [] } }, { assistantId: "nope" }]),
    ).rejects.toThrow(/404/);
    const newest = await client.threads.search({ sortBy: "created_at", sortOrder: "desc", limit: 1 });
    expect(newest.every((x) => x.created_at < before)).toBe(true);
  });
});

describe("webhooks", () => {
  it("a finished run POSTs the run, as GET run shows it, with its final values", async () => {
    const h = await hook();
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["w"] },
      webhook: `${h.url}/done?k=1`,
    });
    await client.runs.join(t.thread_id, run.run_id);
    const [body] = await received(h);
    expect(h.seen[0]).toMatchObject({ method: "POST", path: "/done" });
    expect(h.seen[0].headers["content-type"]).toBe("application/json");
    expect(body).toMatchObject({
      ...(await client.runs.get(t.thread_id, run.run_id)),
      status: "success",
      values: { items: ["w", "work", "done"] },
      webhook_sent_at: expect.any(String),
    });
    expect(body).not.toHaveProperty("error");
  });

  it("a failed run's webhook carries the error; a cancelled run's says interrupted", async () => {
    const h = await hook();
    const t = await client.threads.create();
    const failed = await client.runs.create(t.thread_id, "boom", { input: { items: [] }, webhook: h.url });
    await client.runs.join(t.thread_id, failed.run_id);
    const [first] = await received(h);
    expect(first).toMatchObject({ run_id: failed.run_id, status: "error", error: "kaput" });
    const t2 = await client.threads.create();
    const cut = await client.runs.create(t2.thread_id, "hold", { input: { items: ["x"] }, webhook: h.url });
    await runningSoon(t2.thread_id, cut.run_id);
    await client.runs.cancel(t2.thread_id, cut.run_id, true);
    const [, second] = await received(h, 2);
    expect(second).toMatchObject({ run_id: cut.run_id, status: "interrupted", values: { items: ["x"] } });
  });

  it("a webhook answering 5xx is retried; one that cannot be reached does not fail the run", async () => {
    const h = await hook((_req, n) => (n === 0 ? 503 : 200));
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "slow", { input: { items: [] }, webhook: h.url });
    const bodies = await received(h, 2);
    expect(bodies.map((b) => b.run_id)).toEqual([run.run_id, run.run_id]);
    const gone = await client.runs.wait(t.thread_id, "slow", {
      input: { items: ["y"] },
      webhook: "http://127.0.0.1:9/unreachable",
    });
    expect(gone).toEqual({ items: ["work", "done", "y", "work", "done"] });
    const [last] = await client.runs.list(t.thread_id, { limit: 1 });
    expect(last.status).toBe("success");
  });

  it("a rolled-back run sends no webhook", async () => {
    const h = await hook();
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "hold", { input: { items: ["a"] }, webhook: h.url });
    await runningSoon(t.thread_id, a.run_id);
    const b = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["b"] },
      multitaskStrategy: "rollback",
      webhook: h.url,
    });
    await client.runs.join(t.thread_id, b.run_id);
    await received(h);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.seen.map((s) => JSON.parse(s.body).run_id)).toEqual([b.run_id]);
  });

  it("a webhook must be an http(s) URL without credentials (422)", async () => {
    const t = await client.threads.create();
    for (const webhook of ["ftp://example.com/h", "http://user:pw@example.com/h", "not a url"]) {
      const r = await agent(`/threads/${t.thread_id}/runs`, { assistant_id: "slow", webhook });
      expect(r.status).toBe(422);
      expect(r.json.detail[0].loc).toEqual(["body", "webhook"]);
    }
  });
});
