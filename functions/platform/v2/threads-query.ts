import { queryThreads } from "../../../shared/runs/threads.ts";
import { ThreadsQueryBody } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: ThreadsQueryBody,
  handle: ({ body, tenantId }) => queryThreads(tenantId, body),
});
