import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { docsPage } from "../../../shared/agent/openapi.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  handle: ({ params }) =>
    reply(200, docsPage(params.deployment_id), { "content-type": "text/html; charset=utf-8" }),
});
