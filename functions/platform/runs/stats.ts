import { z } from "zod";
import { optional, RunFilterFields, runFilters } from "../../../shared/runs/query-body.ts";
import { runStats } from "../../../shared/runs/stats.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: z.looseObject({
    ...RunFilterFields,
    data_source_type: optional(
      z.never({ error: "data source types are not served: every run is read from the one run store" }),
    ),
  }),
  handle: ({ body: { data_source_type: _one, ...body }, tenantId }) => runStats(tenantId, runFilters(body)),
});
