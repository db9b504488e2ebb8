import { describe, expect, it } from "vitest";
import { branchesOf, type Checkpoint, idOf, interruptsAt, stepsBack, writesOf } from "./timeline.ts";

const cp = (
  id: string,
  parent: string | undefined,
  step: number,
  extra: Partial<Checkpoint> = {},
): Checkpoint => ({
  values: { id },
  next: [],
  checkpoint: { checkpoint_id: id },
  parent_checkpoint: parent ? { checkpoint_id: parent } : null,
  metadata: { step, source: step < 0 ? "input" : "loop" },
  created_at: `2026-01-01T00:00:${String(id.charCodeAt(0) - 90).padStart(2, "0")}Z`,
  ...extra,
});

// a → b → c → d, and a fork from b: e → f (made later than d). History arrives newest first.
const history = [
  cp("f", "e", 3),
  cp("e", "b", 2, { metadata: { step: 2, source: "update" } }),
  cp("d", "c", 3),
  cp("c", "b", 2),
  cp("b", "a", 1, { tasks: [{ id: "t", name: "tools", result: { messages: ["sunny"] } }] }),
  cp("a", undefined, -1),
];

describe("timeline", () => {
  it("a linear thread is one branch, oldest checkpoint first", () => {
    const branches = branchesOf(history.slice(2));
    expect(branches).toHaveLength(1);
    expect(branches[0]!.checkpoints.map(idOf)).toEqual(["a", "b", "c", "d"]);
  });

  it("a fork is a second branch beside the first, saying where it forked", () => {
    const branches = branchesOf(history);
    expect(branches.map((b) => b.checkpoints.map(idOf))).toEqual([
      ["a", "b", "c", "d"],
      ["e", "f"],
    ]);
    expect(branches[1]!.forkedFrom).toEqual({ id: "b", step: 1, branch: 1 });
  });

  it("the original branch keeps the older child, whatever order the history came in", () => {
    const shuffled = [history[3]!, history[1]!, history[5]!, history[0]!, history[4]!, history[2]!];
    expect(branchesOf(shuffled)[0]!.checkpoints.map(idOf)).toEqual(["a", "b", "c", "d"]);
  });

  it("a checkpoint whose parent is not in the page starts its own branch", () => {
    expect(branchesOf([cp("d", "c", 3)]).map((b) => b.checkpoints.map(idOf))).toEqual([["d"]]);
  });

  it("a step's writes are its parent's task results", () => {
    expect(writesOf(history[3]!, history)).toEqual({ tools: { messages: ["sunny"] } });
    expect(writesOf(history[5]!, history)).toEqual({ __start__: { id: "a" } });
  });

  it("going back two checkpoints from a branch's newest", () => {
    expect(idOf(stepsBack(branchesOf(history)[0]!, 2)!)).toBe("b");
  });

  it("interrupts are read from the tasks first", () => {
    const c = cp("x", undefined, 1, { tasks: [{ id: "t", name: "n", interrupts: [{ value: "ask" }] }] });
    expect(interruptsAt(c)).toEqual([{ value: "ask" }]);
    expect(interruptsAt(cp("y", undefined, 1, { interrupts: [{ value: "own" }] }))).toEqual([
      { value: "own" },
    ]);
  });
});
