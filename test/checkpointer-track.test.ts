import { describe, expect, it } from "vitest";
import "./helpers/cloud.ts";
import { randomUUID } from "node:crypto";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { DynamoCheckpointSaver, type RunFence } from "../shared/agent/checkpoint/checkpointer.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { toItem } from "../shared/aws/ddb.ts";
import { tableName } from "../shared/tables.ts";

// A tracked thread (its run executes in this process) is read from what the saver just put, not from
// DynamoDB: the answer must equal what a read from DynamoDB gives, for every kind of state a run leaves.
const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

async function bothReads(saver: DynamoCheckpointSaver, thread: string, run: () => Promise<unknown>) {
  saver.track(thread);
  await run();
  const config = { configurable: { thread_id: thread } };
  const tracked = await saver.getTuple(config);
  await saver.untrack(thread);
  const stored = await saver.getTuple(config);
  return { tracked, stored };
}

describe("DynamoCheckpointSaver.track", () => {
  const saver = new DynamoCheckpointSaver({ scope: `t-${randomUUID()}#d` });
  // A run's fence: a record in the main table that says its attempt is running (the worker's run record).
  const fenceOf = async (run: string): Promise<RunFence> => {
    const key = { PK: `fence-test#${randomUUID()}`, SK: `run#${run}` };
    await dynamo().send(
      new PutItemCommand({
        TableName: tableName("main"),
        Item: toItem({ ...key, status: "running", attempt: 1 }),
      }),
    );
    return { key, attempt: 1, run };
  };
  const oneStep = () =>
    new StateGraph(State)
      .addNode("a", () => ({ items: ["a"] }))
      .addEdge(START, "a")
      .addEdge("a", END)
      .compile({ checkpointer: saver });

  it("answers a finished multi-step run's state as DynamoDB does", async () => {
    const g = new StateGraph(State)
      .addNode("a", () => ({ items: ["a"] }))
      .addNode("b", () => ({ items: ["b"] }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("b", END)
      .compile({ checkpointer: saver });
    const thread = randomUUID();
    await g.invoke({ items: ["before"] }, { configurable: { thread_id: thread } });
    const { tracked, stored } = await bothReads(saver, thread, () =>
      g.invoke({ items: ["in"] }, { configurable: { thread_id: thread } }),
    );
    expect(tracked?.checkpoint.channel_values).toEqual({ items: ["before", "a", "b", "in", "a", "b"] });
    expect(tracked).toEqual(stored);
  });

  it("keeps an interrupt's pending write, which may be put before its checkpoint", async () => {
    const g = new StateGraph(State)
      .addNode("ask", () => ({ items: [`answer:${interrupt("what?")}`] }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: saver });
    const thread = randomUUID();
    const { tracked, stored } = await bothReads(saver, thread, () =>
      g.invoke({ items: [] }, { configurable: { thread_id: thread } }),
    );
    expect(tracked?.pendingWrites?.map((w) => w[1])).toEqual(["__interrupt__"]);
    expect(tracked).toEqual(stored);
    const state = await g.getState({ configurable: { thread_id: thread } });
    expect(state.tasks[0].interrupts[0].value).toBe("what?");
  });

  it("copies values through the serializer: messages come back as messages, and edits do not leak", async () => {
    const g = new StateGraph(MessagesAnnotation)
      .addNode("reply", () => ({ messages: [new AIMessage("hi")] }))
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile({ checkpointer: saver });
    const thread = randomUUID();
    const { tracked, stored } = await bothReads(saver, thread, () =>
      g.invoke({ messages: [new HumanMessage("yo")] }, { configurable: { thread_id: thread } }),
    );
    const messages = tracked?.checkpoint.channel_values.messages as AIMessage[];
    expect(messages.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(tracked).toEqual(stored);
    saver.track(thread);
    await g.invoke({ messages: [new HumanMessage("again")] }, { configurable: { thread_id: thread } });
    const first = await saver.getTuple({ configurable: { thread_id: thread } });
    (first!.checkpoint.channel_values.messages as unknown[]).length = 0;
    const second = await saver.getTuple({ configurable: { thread_id: thread } });
    expect((second!.checkpoint.channel_values.messages as unknown[]).length).toBe(4);
    await saver.untrack(thread);
  });

  it("stores a failed superstep's successful writes when the run settles, so a retry skips that task", async () => {
    let okCalls = 0;
    let fail = true;
    const g = new StateGraph(State)
      .addNode("ok", () => {
        okCalls++;
        return { items: ["ok"] };
      })
      .addNode("boom", () => {
        if (fail) throw new Error("boom");
        return { items: ["boom"] };
      })
      .addEdge(START, "ok")
      .addEdge(START, "boom")
      .addEdge("ok", END)
      .addEdge("boom", END)
      .compile({ checkpointer: saver });
    const thread = randomUUID();
    const config = { configurable: { thread_id: thread } };
    saver.track(thread);
    await expect(g.invoke({ items: [] }, config)).rejects.toThrow("boom");
    await saver.untrack(thread);
    const stored = await saver.getTuple(config);
    expect(
      stored?.pendingWrites?.some(([, channel, value]) => channel === "items" && String(value) === "ok"),
    ).toBe(true);
    fail = false;
    expect((await g.invoke(null, config)).items.sort()).toEqual(["boom", "ok"]);
    expect(okCalls).toBe(1);
  });

  it("a replayed task's write that was stored before keeps the first copy; the checkpoint is still stored", async () => {
    const thread = randomUUID();
    const cp = (id: string) => ({
      v: 4,
      id,
      ts: new Date().toISOString(),
      channel_values: { items: [id] },
      channel_versions: { items: 1 },
      versions_seen: {},
    });
    const first = await saver.put(
      { configurable: { thread_id: thread, checkpoint_ns: "" } },
      cp("1"),
      { source: "loop", step: 0, parents: {} },
      { items: 1 },
    );
    await saver.putWrites(first, [["items", ["first"]]], "task-1");
    saver.track(thread);
    await saver.putWrites(first, [["items", ["replayed"]]], "task-1");
    const second = await saver.put(first, cp("2"), { source: "loop", step: 1, parents: {} }, { items: 2 });
    await saver.untrack(thread);
    expect((await saver.getTuple(second))?.checkpoint.id).toBe("2");
    expect((await saver.getTuple(first))?.pendingWrites).toEqual([["task-1", "items", ["first"]]]);
  });

  it("refuses a fenced write once the run's rollback is asked for (RunAborted), and another attempt's (LeaseLost)", async () => {
    const g = oneStep();
    for (const [record, error] of [
      [{ status: "running", attempt: 1, cancel_action: "rollback" }, "run rollback"],
      [{ status: "running", attempt: 2 }, "no longer owns the run"],
    ] as const) {
      const key = { PK: `fence-test#${randomUUID()}`, SK: "run#r" };
      await dynamo().send(
        new PutItemCommand({ TableName: tableName("main"), Item: toItem({ ...key, ...record }) }),
      );
      const thread = randomUUID();
      saver.track(thread, { key, attempt: 1 });
      await expect(
        g.invoke({ items: ["x"] }, { configurable: { thread_id: thread }, metadata: { run_id: "r" } }),
      ).rejects.toThrow(error);
      await saver.untrack(thread);
      expect(await saver.getTuple({ configurable: { thread_id: thread } })).toBeUndefined();
    }
  });

  it("a run that ends after the thread's next run began here leaves that run tracked: tagged, fenced, found by a rollback", async () => {
    // Each run's fence: a record in the main table that says it is running (the worker's run record).
    const g = oneStep();
    const thread = randomUUID();
    const [first, next] = [await fenceOf("first"), await fenceOf("next")];
    saver.track(thread, first);
    // The first run released the thread; the next run started in this process before the first one untracked.
    saver.track(thread, next);
    await saver.untrack(thread, first);
    await g.invoke(
      { items: ["next"] },
      { configurable: { thread_id: thread }, metadata: { run_id: "next" } },
    );
    expect(await saver.deleteByRunId(thread, "next")).toBe(3);
    expect(await saver.getTuple({ configurable: { thread_id: thread } })).toBeUndefined();
    await saver.untrack(thread, next);
  });

  it("refuses a late write of a run that ended here, and of another run than the one tracking the thread", async () => {
    const g = oneStep();
    const thread = randomUUID();
    const [ended, current] = [await fenceOf(randomUUID()), await fenceOf(randomUUID())];
    const write = (run: string) =>
      g.invoke({ items: [run] }, { configurable: { thread_id: thread }, metadata: { run_id: run } });
    saver.track(thread, ended);
    await saver.untrack(thread, ended);
    await expect(write(ended.run!)).rejects.toThrow("no longer owns the run");
    saver.track(thread, current);
    await expect(write(ended.run!)).rejects.toThrow("no longer owns the run");
    await expect(write(randomUUID())).rejects.toThrow("no longer owns the run");
    expect(await saver.getTuple({ configurable: { thread_id: thread } })).toBeUndefined();
    await write(current.run!);
    await saver.untrack(thread, current);
    const stored = await saver.getTuple({ configurable: { thread_id: thread } });
    expect((stored?.metadata as Record<string, unknown> | undefined)?.run_id).toBe(current.run);
  });

  it("forgets a thread's latest checkpoint when checkpoints are deleted", async () => {
    const g = oneStep();
    const thread = randomUUID();
    saver.track(thread);
    await g.invoke({ items: [] }, { configurable: { thread_id: thread } });
    await saver.deleteThread(thread);
    expect(await saver.getTuple({ configurable: { thread_id: thread } })).toBeUndefined();
    await saver.untrack(thread);
  });
});
