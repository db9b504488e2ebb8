import { z } from "zod";
import { defineHandler } from "../handler.ts";
import { platformAgentServer } from "./platform.ts";

// The agent server's health check (ops/system.ts `health`): 200 once a revision of the deployment serves, 503
// before. Public, told only to the deployment's own workspace.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.string().max(128) }),
  response: z.object({ ok: z.boolean() }),
  handle: ({ params, headers }) => platformAgentServer.system.health(headers, params.deployment_id),
});
