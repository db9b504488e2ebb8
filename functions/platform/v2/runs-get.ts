import { z } from "zod";
import { RunId } from "../../../shared/runs/schema.ts";
import { retrieveRunV2 } from "../../../shared/runs/v2.ts";
import { RunRetrieveQuery } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ run_id: RunId }),
  query: RunRetrieveQuery,
  handle: ({ params, query, tenantId }) => retrieveRunV2(tenantId, params.run_id.toLowerCase(), query),
});
