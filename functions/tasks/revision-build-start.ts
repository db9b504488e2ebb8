import { type PipelineInput, startBuild } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline, before CodeBuild: the build's job and its presigned URLs (its environment overrides).
export const handler = defineTask("RevisionBuildStart", (event: PipelineInput) => startBuild(event));
