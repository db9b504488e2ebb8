import { type PipelineInput, prepare } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline, first state: which phase this execution runs (build, deploy, or nothing left).
export const handler = defineTask("RevisionPrepare", (event: PipelineInput) => prepare(event));
