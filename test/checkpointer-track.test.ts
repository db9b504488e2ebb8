import { describe, expect, it } from "vitest";
import "./helpers/cloud.ts";
import { randomUUID } from "node:crypto";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { DynamoCheckpointSaver } from "../shared/agent/checkpointer.ts";

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
  saver.untrack(thread);
  const stored = await saver.getTuple(config);
  return { tracked, stored };
}

describe("DynamoCheckpointSaver.track", () => {
  const saver = new DynamoCheckpointSaver({ scope: `t-${randomUUID()}#d` });

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
    saver.untrack(thread);
  });

  it("forgets a thread's latest checkpoint when checkpoints are deleted", async () => {
    const g = new StateGraph(State)
      .addNode("a", () => ({ items: ["a"] }))
      .addEdge(START, "a")
      .addEdge("a", END)
      .compile({ checkpointer: saver });
    const thread = randomUUID();
    saver.track(thread);
    await g.invoke({ items: [] }, { configurable: { thread_id: thread } });
    await saver.deleteThread(thread);
    expect(await saver.getTuple({ configurable: { thread_id: thread } })).toBeUndefined();
    saver.untrack(thread);
  });
});
