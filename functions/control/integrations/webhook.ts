import { z } from "zod";
import { receiveWebhook, WebhookAnswer } from "../../../shared/control/push-deploy.ts";
import { defineHandler } from "../../handler.ts";

// No API key (GitHub cannot send one): the delivery's HMAC signature, made with the webhook secret of the
// integration the URL names, authenticates it. The raw body is what was signed: it is read as sent, never
// parsed and re-serialized before the check.
export const handler = defineHandler({
  query: z.object({
    integration_id: z
      .string()
      .min(1)
      .max(128)
      .describe("The integration whose webhook secret signs the deliveries (put it in the webhook's URL)"),
  }),
  rawBody: true,
  response: WebhookAnswer,
  handle: ({ query, headers, raw }) => receiveWebhook({ integrationId: query.integration_id, headers, raw }),
});
