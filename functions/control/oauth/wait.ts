import { z } from "zod";
import { config } from "../../../shared/config.ts";
import { qInt } from "../../../shared/http/query.ts";
import { WaitResult, waitForFlow } from "../../../shared/oauth/flow.ts";
import { defineHandler } from "../../handler.ts";

// Holds the request up to AUTH_WAIT_SECONDS (25 s); a longer `timeout` answers `pending`: call again.
export const handler = defineHandler({
  params: z.object({ auth_id: z.uuid() }),
  query: z.looseObject({ timeout: qInt(0, 3600).optional() }),
  response: WaitResult,
  handle: ({ tenantId, params, query }) =>
    waitForFlow(tenantId, params.auth_id, query.timeout ?? 300, config.authWaitSeconds),
});
