import { fail, type PipelineInput } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline, the Catch of every step: the revision ends failed with the step's error.
export const handler = defineTask(
  "RevisionFailed",
  (event: PipelineInput & { failure?: { Error?: string; Cause?: string } }) =>
    fail(event, event.failure?.Error, event.failure?.Cause),
);
