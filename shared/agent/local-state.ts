// Whether the graphs of `npm start -- --graph` serve yet; its own module so the ok handler imports no bundler.
export const LOCAL_DEPLOYMENT_ID = "local";

const state = new Map<string, "loading" | "ready">();

/** "loading" while the graphs are being bundled, "ready" once they serve, undefined for other ids. */
export const localDeploymentState = (deploymentId: string) => state.get(deploymentId);

export function setLocalDeploymentState(deploymentId: string, s: "loading" | "ready" | undefined): void {
  if (s) state.set(deploymentId, s);
  else state.delete(deploymentId);
}
