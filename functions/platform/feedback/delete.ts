import { z } from "zod";
import { deleteFeedback } from "../../../shared/runs/feedback.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ feedback_id: z.uuid() }),
  response: z.object({}),
  handle: async ({ tenantId, params }) => {
    await deleteFeedback(tenantId, params.feedback_id);
    return {};
  },
});
