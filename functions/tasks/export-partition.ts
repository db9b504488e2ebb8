import { type PartitionJob, runPartition } from "../../shared/export/exporter.ts";
import { defineTask } from "../task-manifest.ts";

// One invocation of one export run: exports until done or the chunk budget ends, checkpointing per file.
export const handler = defineTask("ExportPartition", (job: PartitionJob) => runPartition(job));
