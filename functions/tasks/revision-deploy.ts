import { deploy, type PipelineInput } from "../../shared/control/pipeline.ts";

// Revision pipeline: smoke-test the built graphs and switch the deployment's active revision.
export const handler = (event: PipelineInput) => deploy(event);
