import { queryTracesV2 } from "../../../shared/runs/v2.ts";
import { TracesQueryBody } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: TracesQueryBody,
  handle: ({ body, tenantId }) => queryTracesV2(tenantId, body),
});
