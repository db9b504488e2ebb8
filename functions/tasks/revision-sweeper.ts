import { sweepDeploymentPurges } from "../../shared/control/deployment-lifecycle.ts";
import { sweepRevisions } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// The control plane's sweeper (local start-up; a rate schedule in AWS): re-drives revisions whose pipeline a
// stopped process left unfinished, and resumes deleted deployments' purges a crash or failure left unfinished.
export const handler = defineTask("RevisionSweeper", async () => ({
  ...(await sweepRevisions()),
  purges_resumed: await sweepDeploymentPurges(),
}));
