import { afterAll, expect, it } from "vitest";
import { type RunningPlatform, startPlatform } from "../bench/platform.ts";
import { deployedClient } from "./helpers/agents.ts";
import { platformApi, waitFor } from "./helpers/export.ts";
import { gitRepo, graphRepoFiles } from "./helpers/repos.ts";

// Nothing lost: an agent run's trace waits in its runtime's batch for a timer (AGENT_TRACE_FLUSH_MS). Stopping
// the platform (SIGTERM or Ctrl-C) stops each runtime first, which sends what it holds while the gateway still
// takes it. The timer here is ten minutes, so only the stop can have sent the trace.
let platform: RunningPlatform | undefined;
const repo = gitRepo(graphRepoFiles(["first", "second"]));
afterAll(async () => {
  await platform?.stop();
  repo.remove();
});

it("stopping the platform sends the traces its runtimes still hold: after a restart the run's trace is there", async () => {
  platform = await startPlatform({ LOG_LEVEL: "error", AGENT_TRACE_FLUSH_MS: "600000" });
  const { deploymentId, client } = await deployedClient(platform.facts, repo.dir, "trace-stop");
  const thread = await client.threads.create();
  const values = await client.runs.wait(thread.thread_id, "agent", { input: { text: "go" } });
  expect(values).toEqual({ text: "go>first>second" });
  const [run] = await client.runs.list(thread.thread_id);
  let api = platformApi(platform);
  const projectId = (await api("GET", `/v2/deployments/${deploymentId}`)).json.tracing_project_id as string;
  expect(projectId).toEqual(expect.any(String));
  // Still in the runtime's batch: the timer has not fired.
  expect((await api("POST", "/api/v1/runs/query", { trace: run.run_id, limit: 100 })).json.runs).toEqual([]);

  await platform.stop({ keepData: true });
  platform = await startPlatform(
    { LOG_LEVEL: "error", AGENT_TRACE_FLUSH_MS: "600000" },
    { dataDir: platform.dataDir, port: platform.port, s3Port: platform.s3Port },
  );
  api = platformApi(platform);
  const names = await waitFor("the run's trace", async () => {
    const runs = (await api("POST", "/api/v1/runs/query", { trace: run.run_id, limit: 100 })).json.runs as {
      name: string;
      end_time: string | null;
    }[];
    return runs.length === 3 && runs.every((r) => r.end_time) ? runs.map((r) => r.name).sort() : undefined;
  });
  expect(names).toEqual(["agent", "first", "second"]);
});
