import { describe, expect, it } from "vitest";
import { idleProgress, type ProgressAction, progressReducer, splitEvent } from "./run-progress.ts";

const run = (...parts: { event: string; data: any }[]) =>
  [
    { type: "start" } as ProgressAction,
    ...parts.map((part) => ({ type: "part", part }) as ProgressAction),
  ].reduce(progressReducer, idleProgress);

const task = (name: string, step = 1) => ({
  event: "debug",
  data: { step, type: "task", payload: { name } },
});
const result = (name: string, extra: Record<string, unknown> = {}) => ({
  event: "debug",
  data: {
    type: "task_result",
    payload: { name, result: { out: name }, interrupts: [], error: null, ...extra },
  },
});

describe("run progress", () => {
  it("marks a node running when its task starts and done with its update when it ends", () => {
    const p = run({ event: "metadata", data: { run_id: "r1" } }, task("agent"));
    expect(p.statuses).toEqual({ agent: "running" });
    expect(p.runId).toBe("r1");
    const q = progressReducer(p, { type: "part", part: result("agent") });
    expect(q.statuses).toEqual({ agent: "done" });
    expect(q.updates.agent).toEqual({ out: "agent" });
  });

  it("keeps each node's last update and the order nodes ran in", () => {
    const p = run(task("agent"), result("agent"), task("tools"), result("tools"), task("agent"), {
      event: "debug",
      data: { type: "task_result", payload: { name: "agent", result: { out: "second" }, interrupts: [] } },
    });
    expect(p.order).toEqual(["agent", "tools", "agent"]);
    expect(p.updates.agent).toEqual({ out: "second" });
  });

  it("takes node updates from `updates` events when debug is not streamed", () => {
    const p = run({ event: "updates", data: { agent: { messages: [1] } } });
    expect(p.statuses.agent).toBe("done");
    expect(p.updates.agent).toEqual({ messages: [1] });
  });

  it("marks a failed task as error and an interrupted one as interrupted, with the interrupt kept", () => {
    const p = run(
      task("a"),
      result("a", { error: "boom" }),
      task("b"),
      result("b", { interrupts: [{ value: 1 }] }),
    );
    expect(p.statuses).toEqual({ a: "error", b: "interrupted" });
    expect(p.interrupts).toEqual([{ value: 1 }]);
    expect(run({ event: "updates", data: { __interrupt__: [{ value: 2 }] } }).interrupts).toEqual([
      { value: 2 },
    ]);
  });

  it("names a subgraph's nodes as xray does: `<subgraph>:<node>`", () => {
    expect(splitEvent("updates|research:1234|inner:99")).toEqual({
      mode: "updates",
      prefix: "research:inner",
    });
    const p = run({ event: "debug|research:1234", data: { type: "task", payload: { name: "search" } } });
    expect(p.statuses).toEqual({ "research:search": "running" });
  });

  it("a node still running when the stream fails is marked failed", () => {
    const p = progressReducer(run(task("agent")), { type: "end", error: "network" });
    expect(p.statuses.agent).toBe("error");
    expect(p.running).toBe(false);
    expect(p.error).toBe("network");
  });
});
