import { cleanUpExpiredRuns } from "../../shared/retention/cleanup.ts";
import { defineTask } from "../task-manifest.ts";

// The runs table's stream (TTL deletes of run items and attachment records only; locally the TTL emulation):
// deletes expired runs' S3 payloads and orphaned attachments' objects. Partial batch failures make the event source retry from the first run not cleaned up.
export const handler = defineTask("RunRetentionCleanup", (event: unknown) => cleanUpExpiredRuns(event));
