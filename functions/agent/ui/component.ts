import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { agentServerBase, uiComponentHtml } from "../../../shared/agent/ui.ts";
import { defineHandler, reply, z } from "../../handler.ts";

// POST /agents/{deployment_id}/ui/{name}: what LoadExternalComponent inserts (served by the runtime).
export const handler = defineHandler({
  params: DeploymentParams.extend({ name: z.string().min(1).max(256) }),
  body: z.looseObject({ name: z.string().min(1), shadowRootId: z.string().optional() }),
  handle: async ({ tenantId, params, body, event }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const base = agentServerBase(event, params.deployment_id);
    const html = await uiComponentHtml(d, params.name, body.name, body.shadowRootId, base);
    if (html === undefined) return reply(404, { detail: `UI not found for agent "${params.name}"` });
    return reply(200, html, { "content-type": "text/html; charset=utf-8" });
  },
});
