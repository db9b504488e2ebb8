import { type PipelineInput, prepare } from "../../shared/control/pipeline.ts";

// Revision pipeline, first state: which phase this execution runs (build, deploy, or nothing left).
export const handler = (event: PipelineInput) => prepare(event);
