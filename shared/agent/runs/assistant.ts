import type { GraphConfig } from "../../records/agent.ts";
import { resolveAssistant } from "../assistants/assistants.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";

// The graph a run or a thread's state call addresses: `assistant_id` is an assistant id or a graph id.
export interface RunGraph {
  assistant_id: string;
  graph_id: string;
  /** The assistant's own config and context; a run's values override them. */
  config: GraphConfig;
  context: Record<string, unknown>;
}

/** The assistant and graph a run addresses, from the records (the graph itself is loaded when the run executes). */
export async function graphFor(d: AgentDeployment, assistantIdOrGraphId: string): Promise<RunGraph> {
  const assistant = await resolveAssistant(d, assistantIdOrGraphId);
  return {
    assistant_id: assistant.assistant_id,
    graph_id: assistant.graph_id,
    config: assistant.config ?? {},
    context: (assistant.context ?? {}) as Record<string, unknown>,
  };
}
