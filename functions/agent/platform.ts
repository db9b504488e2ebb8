import { deploymentsHost } from "../../shared/agent/hosting/host.ts";
import { createAgentServer } from "../../shared/agent/ops/index.ts";

// The agent server of a platform process (ops/server.ts), built once here for this process's entry points — the
// platform's own agent routes (health, metrics, docs, UI files), the cron tick and the run sweeper. It reads
// deployments from their records and has each deployment's runtime execute its runs (the Lambda host).

/** How this process reaches deployments' runtimes: their Lambda functions. */
export const platformHost = deploymentsHost();
export const platformAgentServer = createAgentServer({ host: platformHost });
