import { finishBuild, type PipelineInput } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline, after CodeBuild: the build's result, artifact and log go to the revision.
export const handler = defineTask("RevisionBuildFinish", (event: PipelineInput) => finishBuild(event));
