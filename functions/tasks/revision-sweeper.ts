import { deploymentsHost } from "../../shared/agent/hosting/host.ts";
import { sweepDeploymentPurges } from "../../shared/control/deployment-lifecycle.ts";
import { sweepRevisions } from "../../shared/control/pipeline.ts";
import { redeployStaleRuntimes } from "../../shared/control/runtime-upgrade.ts";
import { defineTask } from "../task-manifest.ts";

// The control plane's sweeper (local start-up; a rate schedule in AWS): re-drives revisions whose pipeline a
// stopped process left unfinished, resumes deleted deployments' purges a crash or failure left unfinished, and
// (AWS) redeploys the runtimes a platform upgrade left on an older runtime layer.
const host = deploymentsHost();
export const handler = defineTask("RevisionSweeper", async () => ({
  ...(await sweepRevisions()),
  purges_resumed: await sweepDeploymentPurges(host),
  runtimes_upgraded: await redeployStaleRuntimes(),
}));
