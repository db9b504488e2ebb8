import { cleanUpExpiredRuns } from "../../shared/retention/cleanup.ts";
import { defineTask } from "../task-manifest.ts";

// The runs table's stream (TTL deletes of run items only; locally the TTL emulation): deletes expired runs' S3
// payloads. Partial batch failures make the event source retry from the first run not cleaned up.
export const handler = defineTask("RunRetentionCleanup", (event: unknown) => cleanUpExpiredRuns(event));
