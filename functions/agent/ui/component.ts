import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply, z } from "../handler.ts";

// POST /agents/{deployment_id}/ui/{name}: what LoadExternalComponent inserts (served by the runtime).
export const handler = defineAgentHandler({
  params: DeploymentParams.extend({ name: z.string().min(1).max(256) }),
  body: z.looseObject({ name: z.string().min(1), shadowRootId: z.string().optional() }),
  handle: async ({ params, body, event, server, caller }) => {
    const ui = await server.system.uiComponent(caller, params.deployment_id, event, params.name, body);
    if (ui === undefined) return reply(404, { detail: `UI not found for agent "${params.name}"` });
    return reply(200, ui.html, ui.headers);
  },
});
