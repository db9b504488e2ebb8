import { sweepRevisions } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Re-drives revisions whose pipeline a stopped process left unfinished (local start-up; a rate schedule in AWS).
export const handler = defineTask("RevisionSweeper", async () => sweepRevisions());
