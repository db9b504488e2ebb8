import { z } from "zod";
import { deleteProjectWithRuns } from "../../../shared/projects/projects.ts";
import { defineHandler, reply } from "../../handler.ts";

// LangSmith answers a project deletion with 202: the project is gone at once, its runs shortly after (an
// asynchronous task deletes them).
export const handler = defineHandler({
  params: z.object({ session_id: z.uuid() }),
  response: z.object({}),
  handle: async ({ tenantId, params }) => {
    await deleteProjectWithRuns(tenantId, params.session_id);
    return reply(202, {});
  },
});
