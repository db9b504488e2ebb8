import { z } from "zod";
import { transact } from "../aws/ddb.ts";
import { unseal } from "../crypto/envelope.ts";
import { secretMatches } from "../crypto/secret-hash.ts";
import { BadGateway, BadRequest, NotFound, TokenEndpointError } from "../errors.ts";
import { type OAuthFlowRecord, oauthFlows } from "../records/oauth.ts";
import { canonicalNow } from "../time.ts";
import { exchangeCode, printable } from "./client.ts";
import { parseState } from "./protocol.ts";
import { clientCredentials, getProviderWithSecret } from "./providers.ts";
import { findToken, type StoredToken, tokenPut } from "./tokens.ts";

// The authorization-code flow (with PKCE when the provider uses it): authenticate (./authenticate.ts) starts a
// flow or answers with a token the workspace already holds; the provider redirects the browser to the
// callback, which exchanges the code; wait long-polls the flow's record (shared/records/oauth.ts: its key, TTL
// and statuses).
/** The KMS context of a flow's sealed values (its PKCE verifier, its authorization URL). */
export const flowContext = (tenant: string, authId: string) => ({
  tenant_id: tenant,
  record: `oauth-flow/${authId}`,
});
export const FLOW_TTL_SECONDS = 600;
export const epoch = () => Math.floor(Date.now() / 1000);

/** What a `completed` answer carries besides its status. */
export const TokenFields = z.object({
  /** The access token (never the refresh token), for the workspace that owns it. */
  token: z.string().optional(),
  token_id: z.string().optional(),
  expires_at: z.string().nullable().optional(),
  scopes: z.array(z.string()).optional(),
});

export async function completed(t: StoredToken) {
  const secret = await t.secret();
  return {
    status: "completed" as const,
    token: secret.access_token,
    token_id: t.token.id,
    expires_at: t.token.expires_at,
    scopes: t.token.scopes,
  };
}

/**
 * `GET /v2/auth/wait/{auth_id}`: the langchain-auth SDK's AuthWaitStatus (completed | pending | timeout), and
 * what becomes of a flow that does not complete: `failed` (denied, or the code exchange failed; `error` says
 * why) and `expired` (nobody came back within its 10 minutes).
 */
export const WAIT_STATUSES = ["completed", "pending", "timeout", "failed", "expired"] as const;
export const WaitResult = z.object({
  status: z.enum(WAIT_STATUSES),
  auth_id: z.string(),
  ...TokenFields.shape,
  error: z.string().optional(),
});
export type WaitOut = z.output<typeof WaitResult>;

export const CallbackQuery = z.looseObject({
  code: z.string().max(4096).optional(),
  state: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});
export type CallbackQueryIn = z.output<typeof CallbackQuery>;

const BAD_STATE = "Unknown, expired or already used state";

const flowKey = (flow: OAuthFlowRecord) => ({ tenant: flow.tenant_id, id: flow.id });

async function failFlow(flow: OAuthFlowRecord, from: string, error: string): Promise<void> {
  await oauthFlows.update(flowKey(flow), {
    set: { status: "failed", error, updated_at: canonicalNow() },
    remove: ["url_sealed"],
    when: { status: from },
  });
}

/** The flow a callback's state names, when it is still waiting for this provider's answer. */
async function pendingFlow(providerId: string, state: unknown): Promise<OAuthFlowRecord | undefined> {
  const s = parseState(state);
  if (!s) return undefined;
  const flow = await oauthFlows.get({ tenant: s.tenantId, id: s.authId });
  if (!flow || flow.provider_id !== providerId || !secretMatches(s.secret, flow.state_hash)) return undefined;
  return flow.status === "pending" && flow.expires_at > epoch() ? flow : undefined;
}

/** Handles the provider's redirect: exchanges the code once, stores the token, completes the flow. */
export async function handleCallback(
  providerId: string,
  q: CallbackQueryIn,
): Promise<{ status: "completed"; auth_id: string; message: string }> {
  const flow = await pendingFlow(providerId, q.state);
  if (!flow) throw new BadRequest(BAD_STATE);
  if (q.error) {
    const why = printable(
      `authorization denied: ${q.error}${q.error_description ? `: ${q.error_description}` : ""}`,
    );
    await failFlow(flow, "pending", why);
    throw new BadRequest(`The provider did not authorize the request (${why})`);
  }
  if (!q.code) throw new BadRequest("The callback carries no code");
  // The claim makes the state single-use: of two callbacks with the same state, one exchanges the code.
  const claimed = await oauthFlows.update(flowKey(flow), {
    set: { status: "exchanging", updated_at: canonicalNow() },
    // The URL carries the state, used now: authenticate no longer answers this flow.
    remove: ["url_sealed"],
    when: { status: "pending" },
  });
  if (!claimed) throw new BadRequest(BAD_STATE);
  const tenantId = flow.tenant_id;
  const rec = await getProviderWithSecret(tenantId, providerId);
  if (!rec || rec.id !== flow.provider_record_id) {
    await failFlow(flow, "exchanging", "the OAuth provider was deleted or replaced during the flow");
    throw new BadRequest("The OAuth provider was deleted or replaced during the flow");
  }
  try {
    const grant = await exchangeCode(await clientCredentials(tenantId, rec), {
      code: q.code,
      redirectUri: flow.redirect_uri,
      codeVerifier: flow.verifier_sealed
        ? await unseal(flow.verifier_sealed, flowContext(tenantId, flow.id))
        : undefined,
    });
    const { put, token } = await tokenPut(tenantId, {
      provider_id: rec.provider_id,
      user_id: flow.user_id,
      requested_scopes: flow.scopes,
      grant,
    });
    // Token and flow together: a waiter never sees "completed" without the token being there.
    await transact([
      put,
      {
        Update: oauthFlows.updateInput(flowKey(flow), {
          set: {
            status: "completed",
            token_id: token.id,
            updated_at: canonicalNow(),
            expires_at: epoch() + FLOW_TTL_SECONDS,
          },
          remove: ["verifier_sealed"],
          when: { status: "exchanging" },
        }),
      },
    ]);
  } catch (err) {
    const why = err instanceof TokenEndpointError ? err.message : "internal error while exchanging the code";
    await failFlow(flow, "exchanging", why).catch(() => undefined);
    if (err instanceof TokenEndpointError)
      throw err.rejected
        ? new BadRequest(`The token endpoint rejected the authorization code (${why})`)
        : new BadGateway(`The token endpoint could not be used (${why})`);
    throw err;
  }
  return {
    status: "completed",
    auth_id: flow.id,
    message: "Authorization complete. You can close this window.",
  };
}

/**
 * Long-polls a flow for up to `seconds`: completed (with the token), failed, expired; `timeout` when the
 * caller's `seconds` passed, `pending` when the server's hold limit passed first (call again).
 */
export async function waitForFlow(
  tenantId: string,
  authId: string,
  seconds: number,
  limitSeconds: number,
): Promise<WaitOut> {
  const deadline = Date.now() + Math.min(seconds, limitSeconds) * 1000;
  for (;;) {
    const flow = await oauthFlows.get({ tenant: tenantId, id: authId });
    if (!flow) throw new NotFound("Auth flow not found");
    if (flow.status === "completed") {
      const t = await findToken(tenantId, flow.provider_id, flow.user_id);
      return t && t.token.id === flow.token_id
        ? { ...(await completed(t)), auth_id: authId }
        : { status: "completed", auth_id: authId, token_id: flow.token_id };
    }
    if (flow.status === "failed") return { status: "failed", auth_id: authId, error: flow.error };
    if (flow.expires_at <= epoch()) return { status: "expired", auth_id: authId };
    if (Date.now() >= deadline)
      return { status: seconds <= limitSeconds ? "timeout" : "pending", auth_id: authId };
    await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, deadline - Date.now()))));
  }
}
