import { callerOf, store } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, storePut } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// PUT /agents/{deployment_id}/store/items: store or replace an item (with a TTL in minutes, if given).
export const handler = defineHandler({
  params: deploymentParams,
  body: storePut,
  handle: async ({ params, body, tenantId }) => {
    await store.put(callerOf(tenantId), params.deployment_id, body);
    return reply(204);
  },
});
