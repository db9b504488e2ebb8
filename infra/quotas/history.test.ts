import { describe, expect, it } from "vitest";
import type { AslStates } from "../state-machines/asl.ts";
import { historyBounds } from "./history.ts";

const task = (next: Record<string, unknown>, retry?: unknown[]) => ({
  Type: "Task",
  Resource: "arn:aws:lambda:us-east-1:123456789012:function:f",
  ...(retry ? { Retry: retry } : {}),
  ...next,
});

describe("worst-case history events, counted as GetExecutionHistory lists them", () => {
  it("a task then Succeed: execution 2 + task 5 + succeed 2", () => {
    const def = { StartAt: "T", States: { T: task({ Next: "S" }), S: { Type: "Succeed" } } } as AslStates;
    expect(historyBounds(def)).toEqual([{ execution: "", events: 9 }]);
  });

  it("each retry a task may make adds a failed attempt's 3 events; MaxAttempts defaults to 3", () => {
    const def = {
      StartAt: "T",
      States: { T: task({ End: true }, [{ ErrorEquals: ["A"], MaxAttempts: 4 }, { ErrorEquals: ["B"] }]) },
    } as AslStates;
    expect(historyBounds(def)[0].events).toBe(2 + 5 + (4 + 3) * 3);
  });

  it("an inline Map counts each item's iteration in the parent; a distributed one counts it in each child", () => {
    const processor = (mode: string) => ({
      ProcessorConfig: { Mode: mode },
      StartAt: "T",
      States: { T: task({ End: true }) },
    });
    const def = (mode: string) =>
      ({
        StartAt: "M",
        States: { M: { Type: "Map", ItemsPath: "$.xs", ItemProcessor: processor(mode), End: true } },
      }) as AslStates;
    const bounds = { items: { "$.xs": 10 } };
    expect(historyBounds(def("INLINE"), bounds)).toEqual([{ execution: "", events: 2 + 4 + 10 * (2 + 5) }]);
    expect(historyBounds(def("DISTRIBUTED"), bounds)).toEqual([
      { execution: "", events: 2 + 4 },
      { execution: "M", events: 2 + 5 },
    ]);
    expect(historyBounds(def("INLINE"))[0].events).toBe(Number.POSITIVE_INFINITY);
  });

  it("a loop counts each state as often as its bound allows, failures as their bound allows", () => {
    const def = {
      StartAt: "T",
      States: {
        T: task({ Next: "C" }, [{ ErrorEquals: ["States.ALL"], MaxAttempts: 20 }]),
        C: {
          Type: "Choice",
          Choices: [{ Variable: "$.done", BooleanEquals: true, Next: "S" }],
          Default: "T",
        },
        S: { Type: "Succeed" },
      },
    } as unknown as AslStates;
    const bounds = { states: { T: { entries: 7, failedAttempts: 3 }, C: { entries: 7 } } };
    expect(historyBounds(def, bounds)[0].events).toBe(2 + 7 * 5 + 3 * 3 + 7 * 2 + 2);
  });
});
