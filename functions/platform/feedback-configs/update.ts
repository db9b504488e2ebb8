import {
  FeedbackConfigOut,
  FeedbackConfigUpdate,
  updateFeedbackConfig,
} from "../../../shared/runs/feedback-configs.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: FeedbackConfigUpdate,
  response: FeedbackConfigOut,
  handle: ({ tenantId, body }) => updateFeedbackConfig(tenantId, body),
});
