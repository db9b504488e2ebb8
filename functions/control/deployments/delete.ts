import { z } from "zod";
import { deploymentsHost } from "../../../shared/agent/hosting/host.ts";
import { destroy } from "../../../shared/control/deployment-lifecycle.ts";
import { qBool } from "../../../shared/http/query.ts";
import { defineHandler, reply } from "../../handler.ts";

// How this function reaches deployments' runtimes (their Lambda functions): built once, here.
const host = deploymentsHost();

export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid() }),
  query: z.looseObject({ delete_tracing_project: qBool().optional() }),
  handle: async ({ tenantId, params, query }) => {
    await destroy(host, tenantId, params.deployment_id, query.delete_tracing_project ?? false);
    return reply(204);
  },
});
