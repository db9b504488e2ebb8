import { z } from "zod";
import { threadTraces } from "../../../shared/runs/threads.ts";
import { ThreadTracesQuery } from "../../../shared/runs/v2-schema.ts";
import { defineHandler } from "../../handler.ts";

// A thread id is whatever string the runs' metadata carried.
export const handler = defineHandler({
  params: z.object({ thread_id: z.string().min(1).max(1024) }),
  query: ThreadTracesQuery,
  handle: ({ params, query, tenantId }) => threadTraces(tenantId, params.thread_id, query),
});
