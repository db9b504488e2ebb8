import {
  deploymentParams,
  storeNamespaces,
  storeNamespacesResponse,
} from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/store/namespaces: the namespaces holding items, by prefix, suffix and depth.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: storeNamespaces,
  response: storeNamespacesResponse,
  handle: ({ params, body, server, caller }) => server.store.namespaces(caller, params.deployment_id, body),
});
