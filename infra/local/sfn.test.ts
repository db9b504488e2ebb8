import { describe, expect, it } from "vitest";
import { LocalStepFunctions, MAP_RUN_FAILED } from "./sfn.ts";

// A Map whose item fails, caught by the parent: what the parent's Catch sees depends on the Map's mode.
const machine = (mode: "INLINE" | "DISTRIBUTED") => ({
  StartAt: "Items",
  States: {
    Items: {
      Type: "Map" as const,
      ItemsPath: "$.items",
      ItemProcessor: {
        ProcessorConfig: mode === "DISTRIBUTED" ? { Mode: mode, ExecutionType: "STANDARD" } : { Mode: mode },
        StartAt: "Work",
        States: {
          Work: {
            Type: "Task" as const,
            Resource: "arn:aws:lambda:us-east-1:000000000000:function:W",
            End: true,
          },
        },
      },
      Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.failure", Next: "Caught" }],
      End: true,
    },
    Caught: { Type: "Succeed" as const },
  },
});

async function failureOf(mode: "INLINE" | "DISTRIBUTED") {
  const sfn = new LocalStepFunctions("/nonexistent", () => async () => {
    throw Object.assign(new Error("the item broke"), { name: "ItemBroke" });
  });
  const arn = sfn.register(`m-${mode}`, machine(mode) as never);
  const { executionArn } = sfn.startExecution({
    stateMachineArn: arn,
    input: JSON.stringify({ items: [1, 2] }),
  });
  await sfn.settled(executionArn);
  const exec = sfn.describeExecution({ executionArn });
  expect(exec.status).toBe("SUCCEEDED");
  return JSON.parse(exec.output!).failure.Error;
}

describe("local Step Functions: Map failures as AWS reports them", () => {
  it("an inline Map's failed item hands its own error to the parent's Catch", async () => {
    expect(await failureOf("INLINE")).toBe("ItemBroke");
  });

  it("a Distributed Map's failed child execution reaches the parent as the Map Run's failure", async () => {
    expect(await failureOf("DISTRIBUTED")).toBe(MAP_RUN_FAILED);
  });
});
