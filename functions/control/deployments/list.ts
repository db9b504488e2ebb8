import { z } from "zod";
import { DeploymentOut, listDeployments, toWire } from "../../../shared/control/deployments.ts";
import { qCsv, qInt } from "../../../shared/http/query.ts";
import { DEPLOYMENT_STATUSES } from "../../../shared/records/control.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  query: z.looseObject({
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 1_000_000).optional(),
    name_contains: z.string().max(256).optional(),
    status: z.enum(DEPLOYMENT_STATUSES).optional(),
    deployment_ids: qCsv().optional(),
  }),
  response: z.object({ resources: z.array(DeploymentOut), offset: z.number() }),
  handle: async ({ tenantId, query }) => {
    const page = await listDeployments(tenantId, {
      ...query,
      limit: query.limit ?? 20,
      offset: query.offset ?? 0,
    });
    return { resources: page.resources.map(toWire), offset: page.offset };
  },
});
