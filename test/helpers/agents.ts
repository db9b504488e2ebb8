import { Client } from "@langchain/langgraph-sdk";
import type { LocalFacts } from "../../infra/local/cloud.ts";
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
): Promise<{ deploymentId: string; client: Client }> {
  const headers = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };
  const { deploymentId } = await deployRepo(repoDir, namePrefix, callAt(facts.base_url), headers);
  return { deploymentId, client: agentClient(facts, deploymentId) };
}
