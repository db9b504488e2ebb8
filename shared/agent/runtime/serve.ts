import type { GraphInfo } from "../../build/smoke.ts";
import { RuntimeArtifact } from "../artifact/artifact.ts";
import {
  type AgentDeployment,
  graphStorage,
  type RuntimeServices,
  withStorage,
} from "../deployment/deployment.ts";
import { type GraphSlot, isFailed } from "../deployment/graphs.ts";
import { loadArtifactGraphs } from "./load-graphs.ts";

// A deployment's runtime: the one process (a child process locally, the deployment's Lambda function in AWS)
// that imports the deployment's graphs and executes its runs. It serves that deployment only, takes the
// workspace from the platform's router (which checked the API key), and sends its traces to the platform.

/** What a runtime is told when it starts (non-secret; the deployment's secrets are its environment). */
export interface RuntimeConfig {
  tenant_id: string;
  deployment_id: string;
  revision_id: string;
  graphs: GraphInfo[];
  tracing_project_id: string | null;
  /** Where the revision's bundles are (a local folder; the function's code in AWS). */
  artifact_dir: string;
  /** Names this runtime's claims on runs (a crashed runtime's runs are retried at once). */
  worker_id?: string;
}

/**
 * The deployment a runtime serves, with the services its entry point gives it (where traces go, how webhooks go
 * out): built once per runtime process, by functions/agent/runtime.ts in AWS and infra/local/runtime-main.ts.
 */
export function startRuntime(
  cfg: RuntimeConfig,
  services: Omit<RuntimeServices, "workerId" | "artifact">,
): AgentDeployment {
  const artifact = new RuntimeArtifact(cfg.artifact_dir);
  const d = withStorage(
    {
      tenant_id: cfg.tenant_id,
      deployment_id: cfg.deployment_id,
      revision_id: cfg.revision_id,
      graphs: cfg.graphs,
      tracing_project_id: cfg.tracing_project_id,
    },
    artifact,
  );
  let loaded: Promise<Map<string, GraphSlot>> | undefined;
  d.loadGraphs = () => {
    if (!loaded) {
      loaded = loadArtifactGraphs(cfg.artifact_dir, graphStorage(d));
      loaded.catch(() => {
        loaded = undefined;
      });
    }
    return loaded;
  };
  d.runtime = { ...services, artifact, workerId: cfg.worker_id ?? crypto.randomUUID() };
  return d;
}

/**
 * The nodes of each graph (what the deploy step checks and records, as its smoke test did); a graph that failed
 * to load is listed with its reason instead.
 */
export async function graphNodes(
  d: AgentDeployment,
): Promise<{ graph_id: string; nodes: string[]; error?: string }[]> {
  const out: { graph_id: string; nodes: string[]; error?: string }[] = [];
  for (const [graphId, slot] of await d.loadGraphs!()) {
    if (isFailed(slot)) {
      out.push({ graph_id: graphId, nodes: [], error: slot.error });
      continue;
    }
    const { graph } = slot;
    const drawn = graph.getGraphAsync ? await graph.getGraphAsync() : graph.getGraph?.();
    const nodes = Object.values(drawn?.nodes ?? {})
      .map((n) => String((n as { id?: unknown }).id))
      .filter((id) => id !== "__start__" && id !== "__end__");
    out.push({ graph_id: graphId, nodes });
  }
  return out;
}
