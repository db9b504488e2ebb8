import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";
import { platformAgentServer } from "../platform.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  handle: ({ params }) =>
    reply(200, platformAgentServer.system.docs(params.deployment_id), {
      "content-type": "text/html; charset=utf-8",
    }),
});
