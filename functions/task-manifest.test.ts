import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logger } from "../shared/log.ts";
import { loadTask } from "./modules/tasks.ts";
import { defineTask, tasks } from "./task-manifest.ts";

// Tasks log in their own context: every line written while one runs names the task and the ids of its input.
// Info lines are what these tests read, whatever LOG_LEVEL the run has (the integration setup lowers it).
beforeEach(() => {
  vi.stubEnv("LOG_LEVEL", "info");
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

function captureLogs(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((s) => {
    lines.push(JSON.parse(String(s)));
    return true;
  });
  return lines;
}

describe("task log context", () => {
  it("lines logged while a task runs carry its name, invocation id and input ids, never its secrets", async () => {
    const lines = captureLogs();
    const task = defineTask(
      "ExportPartition",
      async (job: { tenant_id: string; export_id: string; token: string }) => {
        await new Promise((r) => setTimeout(r, 1));
        logger.info("partition step", { shard: 3 });
        return job.export_id;
      },
    );
    const out = await task(
      { tenant_id: "t1", export_id: "e1", token: "secret-token" },
      { awsRequestId: "inv-1" },
    );
    expect(out).toBe("e1");
    expect(lines[0]).toMatchObject({
      msg: "partition step",
      task: "ExportPartition",
      request_id: "inv-1",
      tenant_id: "t1",
      export_id: "e1",
      shard: 3,
    });
    expect(JSON.stringify(lines)).not.toContain("secret-token");
  });

  it("an execution-status event's lines carry the execution and its input's ids", async () => {
    const lines = captureLogs();
    const task = defineTask("ExportExecutionEnded", async (_: unknown) => logger.info("ended"));
    await task({
      detail: { executionArn: "arn:x", status: "FAILED", input: '{"tenant_id":"t1","export_id":"e2"}' },
    });
    expect(lines[0]).toMatchObject({ task: "ExportExecutionEnded", execution_arn: "arn:x", export_id: "e2" });
  });

  it("concurrent tasks keep their own context", async () => {
    const lines = captureLogs();
    const task = defineTask("ExportFinalize", async (input: { export_id: string; wait: number }) => {
      await new Promise((r) => setTimeout(r, input.wait));
      logger.info("finalized", { which: input.export_id });
    });
    await Promise.all([task({ export_id: "slow", wait: 20 }), task({ export_id: "fast", wait: 1 })]);
    expect(lines.map((l) => [l.which, l.export_id])).toEqual([
      ["fast", "fast"],
      ["slow", "slow"],
    ]);
  });

  it("every task of the manifest exports a handler defined with its own name", async () => {
    for (const t of tasks) {
      const handler = (await loadTask(t)) as { task?: string };
      expect(handler.task, `functions/${t.handler}.ts`).toBe(t.name);
    }
  });
});
