import { describe, expect, it } from "vitest";
import type { Message, ThreadState } from "../wire.ts";
import { chatReducer, emptyChat, mergeChunk, pendingInterrupts, shownMessages } from "./playground-chat.ts";

const state = (over: Partial<ThreadState>): ThreadState => ({
  values: null,
  next: [],
  checkpoint: null,
  created_at: null,
  parent_checkpoint: null,
  ...over,
});

describe("the playground's chat", () => {
  it("a loaded state shows the thread's messages and the interrupts waiting on it", () => {
    const chat = chatReducer(emptyChat, {
      type: "load",
      state: state({
        values: { messages: [{ id: "1", type: "human", content: "hi" }] },
        tasks: [{ id: "t", name: "ask", interrupts: [{ id: "i1", value: "approve?" }] }],
      }),
    });
    expect(chat.values).toEqual([{ id: "1", type: "human", content: "hi" }]);
    expect(chat.interrupts).toEqual([{ id: "i1", value: "approve?" }]);
  });

  it("interrupts come from the tasks, else from the state's own list", () => {
    expect(pendingInterrupts(undefined)).toEqual([]);
    expect(pendingInterrupts(state({ interrupts: [{ value: 1 }] }))).toEqual([{ value: 1 }]);
    expect(
      pendingInterrupts(
        state({ tasks: [{ id: "t", name: "n", interrupts: [{ value: 2 }] }], interrupts: [{ value: 1 }] }),
      ),
    ).toEqual([{ value: 2 }]);
  });

  it("a sent message shows at once; the values frame holding it replaces the local copy", () => {
    const sent = chatReducer(emptyChat, {
      type: "send",
      message: { id: "local-1", type: "human", content: "hi" },
    });
    expect(sent.running).toBe(true);
    expect(shownMessages(sent).map((m) => m.content)).toEqual(["hi"]);
    const after = chatReducer(sent, {
      type: "part",
      part: { event: "values", data: { messages: [{ id: "s1", type: "human", content: "hi" }] } },
    });
    expect(shownMessages(after).map((m) => m.id)).toEqual(["s1"]);
  });

  it("message chunks join by id, counted, until the thread holds the message", () => {
    let chat = emptyChat;
    for (const text of ["Hel", "lo"])
      chat = chatReducer(chat, {
        type: "part",
        part: { event: "messages", data: [{ id: "a1", type: "AIMessageChunk", content: text }, {}] },
      });
    expect(chat.chunks).toBe(2);
    expect(shownMessages(chat)).toMatchObject([{ id: "a1", type: "ai", content: "Hello" }]);
    chat = chatReducer(chat, {
      type: "part",
      part: { event: "values", data: { messages: [{ id: "a1", type: "ai", content: "Hello" }] } },
    });
    expect(shownMessages(chat)).toHaveLength(1);
  });

  it("tool-call argument chunks concatenate into a parsed call", () => {
    const chunk = (args: string, extra: Partial<Message> = {}): Message => ({
      id: "a1",
      type: "AIMessageChunk",
      content: "",
      tool_call_chunks: [{ index: 0, args, ...extra }],
    });
    const list = mergeChunk(
      mergeChunk([], chunk('{"city":', { id: "c1", name: "weather" } as never)),
      chunk('"Paris"}'),
    );
    expect(list[0]!.tool_calls).toEqual([{ id: "c1", name: "weather", args: { city: "Paris" } }]);
  });

  it("an interrupt in an updates frame and an error frame are shown; the end stops the run", () => {
    let chat = chatReducer(emptyChat, { type: "send" });
    chat = chatReducer(chat, {
      type: "part",
      part: { event: "updates", data: { __interrupt__: [{ value: "ok?" }] } },
    });
    expect(chat.interrupts).toEqual([{ value: "ok?" }]);
    chat = chatReducer(chat, { type: "part", part: { event: "error", data: { message: "boom" } } });
    chat = chatReducer(chat, { type: "end" });
    expect(chat).toMatchObject({ running: false, error: "boom" });
  });
});
