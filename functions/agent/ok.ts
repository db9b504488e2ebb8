import { z } from "zod";
import { localDeploymentStatus } from "../../shared/agent/local-state.ts";
import { authenticate } from "../../shared/auth/api-keys.ts";
import { NotFound, ServiceUnavailable } from "../../shared/errors.ts";
import { deployments } from "../../shared/records/control.ts";
import { defineHandler } from "../handler.ts";

// The agent server's health check: 200 once a revision of the deployment serves (or, for `npm start -- --graph`,
// once the local graphs are loaded), 503 before. The route is public (the local graphs' check needs no key), but
// a deployment's health is told only to its own workspace: without an API key every id answers 401 unread, and
// with one the deployment is read under the caller's workspace (one GetItem, found or not), so another
// workspace's deployment answers exactly as a missing one.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.string().max(128) }),
  response: z.object({ ok: z.boolean() }),
  handle: async ({ params, headers }) => {
    const local = await localDeploymentStatus(params.deployment_id);
    if (local === "ready") return { ok: true };
    if (local === "loading") throw new ServiceUnavailable("The local graphs are still loading");
    const tenant = await authenticate(headers);
    const d = await deployments.get({ tenant, id: params.deployment_id });
    if (!d) throw new NotFound("Deployment not found");
    if (!d.active_revision_id) throw new ServiceUnavailable("The deployment has no deployed revision yet");
    return { ok: true };
  },
});
