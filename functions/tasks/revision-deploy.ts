import { deploy, type PipelineInput } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline: smoke-test the built graphs and switch the deployment's active revision.
export const handler = defineTask("RevisionDeploy", (event: PipelineInput) => deploy(event));
