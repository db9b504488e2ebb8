import { sweep } from "../../shared/export/lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// Re-drives unfinished exports (local start-up; a rate schedule in AWS) and drains the queues.
export const handler = defineTask("ExportSweeper", async () => sweep());
