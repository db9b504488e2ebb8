import { z } from "zod";
import { RunId } from "../../../shared/runs/schema.ts";
import { traceRunsV2 } from "../../../shared/runs/v2.ts";
import { TraceRunsQuery } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ trace_id: RunId }),
  query: TraceRunsQuery,
  handle: ({ params, query, tenantId }) => traceRunsV2(tenantId, params.trace_id.toLowerCase(), query),
});
