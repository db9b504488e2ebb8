import { deploymentsHost } from "../../shared/agent/hosting/host.ts";
import { deploy, type PipelineInput } from "../../shared/control/pipeline.ts";
import { defineTask } from "../task-manifest.ts";

// Revision pipeline: smoke-test the built graphs and switch the deployment's active revision; the runtime is told
// through the host this task builds (deployments' Lambda functions).
const host = deploymentsHost();
export const handler = defineTask("RevisionDeploy", (event: PipelineInput) => deploy(host, event));
