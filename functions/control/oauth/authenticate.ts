import { config } from "../../../shared/config.ts";
import { AuthenticateBody, AuthenticateResult, authenticate } from "../../../shared/oauth/authenticate.ts";
import { callbackUrl } from "../../../shared/oauth/protocol.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: AuthenticateBody,
  response: AuthenticateResult,
  handle: ({ tenantId, body, headers, event }) => {
    const redirectUri = callbackUrl(
      { headers, domainName: event.requestContext?.domainName, rawPath: event.rawPath },
      body.provider,
      { publicBaseUrl: config.publicBaseUrl, local: config.localMode },
    );
    return authenticate(tenantId, body, redirectUri);
  },
});
