import { queryRunsV2 } from "../../../shared/runs/v2.ts";
import { RunsQueryBody } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: RunsQueryBody,
  handle: ({ body, tenantId }) => queryRunsV2(tenantId, body),
});
