import { type PurgeJob, purgeProjectRuns } from "../../shared/runs/purge.ts";
import { defineTask } from "../task-manifest.ts";

// Invoked asynchronously when a tracing project is deleted: deletes its runs.
export const handler = defineTask("PurgeProjectRuns", async (job: PurgeJob) => ({
  deleted: await purgeProjectRuns(job),
}));
