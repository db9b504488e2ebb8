import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { InvokeCommand } from "@aws-sdk/client-lambda";
import { Client } from "@langchain/langgraph-sdk";
import type { LocalFacts } from "../infra/local/cloud.ts";
import { lambda } from "../shared/aws/clients.ts";
import { waitFor } from "./export.ts";
import { callAt } from "./http.ts";
import { deployRepo } from "./repos.ts";

// The real @langchain/langgraph-sdk Client against a deployed graph repository. `facts` says which platform:
// the shared local cloud's, or those of one a test started with startPlatform.
type Platform = Pick<LocalFacts, "base_url" | "api_key" | "tenant_id">;

/** An SDK client for one deployment's agent server. */
export function agentClient(facts: Platform, deploymentId: string): Client {
  return new Client({
    apiUrl: `${facts.base_url}/agents/${deploymentId}`,
    apiKey: facts.api_key,
    defaultHeaders: { "X-Tenant-Id": facts.tenant_id },
  });
}

/** Deploys the repository in `repoDir`, waits until it is DEPLOYED, and returns an SDK client for it. */
export async function deployedClient(
  facts: Platform,
  repoDir: string,
  namePrefix: string,
  secrets: { name: string; value: string }[] = [],
): Promise<{ deploymentId: string; client: Client }> {
  const headers = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };
  const { deploymentId } = await deployRepo(repoDir, namePrefix, callAt(facts.base_url), headers, secrets);
  return { deploymentId, client: agentClient(facts, deploymentId) };
}

/** Every part of an SDK stream, in order. */
export async function collect(stream: AsyncIterable<{ event: string; data: any; id?: string }>) {
  const out: { event: string; data: any; id?: string }[] = [];
  for await (const part of stream) out.push(part);
  return out;
}

/** Waits until a run has `status` (as runs.get answers it), polling every `everyMs`. */
export const runStatusSoon = (
  client: Client,
  threadId: string,
  runId: string,
  status: string,
  timeoutMs = 10_000,
  everyMs = 20,
) =>
  waitFor(
    `the run to be ${status}`,
    async () => (await client.runs.get(threadId, runId)).status === status,
    timeoutMs,
    everyMs,
  );

/**
 * The host's process id of a deployment's runtime (the Node process inside its sandbox, whose own pid there is
 * 2): found by its command line, which names the deployment's artifact folder.
 */
export function runtimeHostPid(deploymentId: string): number | undefined {
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const isNode = basename(argv[0] ?? "") === "node" || argv[0] === process.execPath;
    if (
      isNode &&
      argv.some((a) => a.endsWith("agent-runtime.mjs")) &&
      argv.some((a) => a.includes(deploymentId))
    )
      return Number(name);
  }
  return undefined;
}

/** Fires one tick of a cron through the AgentCronTick task, as its schedule would; answers the task's result. */
export async function fireCronTick(
  facts: { tenant_id: string },
  deploymentId: string,
  cronId: string,
  scheduledAt: string | null | undefined,
  /** The Lambda API of the platform the deployment is on (default: the shared local cloud's). */
  client = lambda(),
): Promise<{ outcome: string; run_id?: string; thread_id?: string }> {
  const out = await client.send(
    new InvokeCommand({
      FunctionName: "AgentCronTick",
      Payload: JSON.stringify({
        tenant_id: facts.tenant_id,
        deployment_id: deploymentId,
        cron_id: cronId,
        scheduled_at: scheduledAt,
      }),
    }),
  );
  if (out.FunctionError)
    throw new Error(`AgentCronTick failed: ${Buffer.from(out.Payload ?? []).toString()}`);
  return JSON.parse(Buffer.from(out.Payload!).toString());
}
