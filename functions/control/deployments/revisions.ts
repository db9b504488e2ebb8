import { z } from "zod";
import { getDeployment } from "../../../shared/control/deployments.ts";
import { listRevisions, RevisionOut, revisionWire } from "../../../shared/control/revisions.ts";
import { qInt } from "../../../shared/http/query.ts";
import { REVISION_STATUSES } from "../../../shared/records/control.ts";
import { defineHandler } from "../../handler.ts";

// Newest first.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid() }),
  query: z.looseObject({
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 1_000_000).optional(),
    status: z.enum(REVISION_STATUSES).optional(),
  }),
  response: z.object({ resources: z.array(RevisionOut), offset: z.number() }),
  handle: async ({ tenantId, params, query }) => {
    await getDeployment(tenantId, params.deployment_id);
    const page = await listRevisions(tenantId, params.deployment_id, {
      limit: query.limit ?? 20,
      offset: query.offset ?? 0,
      status: query.status,
    });
    return { resources: page.resources.map(revisionWire), offset: page.offset };
  },
});
