import { defineHandler, reply } from "../../handler.ts";

// ANY /agents/{deployment_id}/{proxy+}: a path no built-in route has. The runtime gives it to the deployment's
// custom routes first (langgraph.json http.app, shared/agent/runtime/custom-routes.ts); this is the answer
// when none of them matched, as the reference server's.
export const handler = defineHandler({
  handle: () => reply(404, { detail: "Not Found" }),
});
