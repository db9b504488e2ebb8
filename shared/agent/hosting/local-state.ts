import { callLoopback, LOOPBACK_PATHS } from "../../aws/local-loopback.ts";
import { config } from "../../config.ts";

// Whether the graphs of `npm start -- --graph` serve yet; its own module so the ok handler imports no bundler.
export const LOCAL_DEPLOYMENT_ID = "local";

const state = new Map<string, "loading" | "ready">();

/** "loading" while the graphs are being bundled, "ready" once they serve, undefined for other ids. */
export const localDeploymentState = (deploymentId: string) => state.get(deploymentId);

/**
 * The same, where the ok handler runs: in the local cloud's process its own state; in one of its Lambda
 * environments (a worker, which shares no module state with it) the local cloud's, asked over loopback.
 */
export async function localDeploymentStatus(deploymentId: string): Promise<"loading" | "ready" | undefined> {
  const here = state.get(deploymentId);
  if (here || deploymentId !== LOCAL_DEPLOYMENT_ID || !config.localLoopback) return here;
  const answer = (await callLoopback(LOOPBACK_PATHS.localDeploymentState, {
    deployment_id: deploymentId,
  })) as { state?: "loading" | "ready" } | null;
  return answer?.state ?? undefined;
}

export function setLocalDeploymentState(deploymentId: string, s: "loading" | "ready" | undefined): void {
  if (s) state.set(deploymentId, s);
  else state.delete(deploymentId);
}
