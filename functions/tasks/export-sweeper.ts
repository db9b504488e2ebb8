import { sweep } from "../../shared/export/lifecycle.ts";

// Re-drives unfinished exports (local start-up; a rate schedule in AWS) and drains the queues.
export const handler = async () => sweep();
