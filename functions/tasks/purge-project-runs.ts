import { type PurgeJob, purgeProjectRuns } from "../../shared/runs/purge.ts";

// Invoked asynchronously when a tracing project is deleted: deletes its runs.
export const handler = async (job: PurgeJob) => ({ deleted: await purgeProjectRuns(job) });
