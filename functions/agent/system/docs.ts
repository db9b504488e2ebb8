import { system } from "../../../shared/agent/ops/index.ts";
import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  handle: ({ params }) =>
    reply(200, system.docs(params.deployment_id), { "content-type": "text/html; charset=utf-8" }),
});
