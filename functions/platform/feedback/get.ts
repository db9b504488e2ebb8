import { z } from "zod";
import { FeedbackOut, getFeedback } from "../../../shared/runs/feedback.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ feedback_id: z.uuid() }),
  response: FeedbackOut,
  handle: ({ tenantId, params }) => getFeedback(tenantId, params.feedback_id),
});
