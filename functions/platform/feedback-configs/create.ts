import {
  createFeedbackConfig,
  FeedbackConfigCreate,
  FeedbackConfigOut,
} from "../../../shared/runs/feedback-configs.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: FeedbackConfigCreate,
  response: FeedbackConfigOut,
  handle: ({ tenantId, body }) => createFeedbackConfig(tenantId, body),
});
