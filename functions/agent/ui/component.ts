import { callerOf, system } from "../../../shared/agent/ops/index.ts";
import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply, z } from "../../handler.ts";

// POST /agents/{deployment_id}/ui/{name}: what LoadExternalComponent inserts (served by the runtime).
export const handler = defineHandler({
  params: DeploymentParams.extend({ name: z.string().min(1).max(256) }),
  body: z.looseObject({ name: z.string().min(1), shadowRootId: z.string().optional() }),
  handle: async ({ tenantId, params, body, event }) => {
    const html = await system.uiComponent(callerOf(tenantId), params.deployment_id, event, params.name, body);
    if (html === undefined) return reply(404, { detail: `UI not found for agent "${params.name}"` });
    return reply(200, html, { "content-type": "text/html; charset=utf-8" });
  },
});
