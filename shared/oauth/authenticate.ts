import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import { CREATE_ONLY, cancelCodes, toItem, transact } from "../aws/ddb.ts";
import { seal, unseal } from "../crypto/envelope.ts";
import { secretHash } from "../crypto/secret-hash.ts";
import { NotFound, TokenEndpointError } from "../errors.ts";
import { logger } from "../log.ts";
import { type OAuthFlowRecord, oauthFlows, oauthOpenFlows } from "../records/oauth.ts";
import { canonicalNow } from "../time.ts";
import { refreshGrant } from "./client.ts";
import { completed, epoch, FLOW_TTL_SECONDS, flowContext, TokenFields } from "./flow.ts";
import { authorizationUrl, codeChallenge, formatState, newCodeVerifier, newSecret } from "./protocol.ts";
import {
  clientCredentials,
  getProviderWithSecret,
  ProviderId,
  type ProviderWithSecret,
  Scope,
} from "./providers.ts";
import { findToken, isFresh, type StoredToken, saveToken, type Token } from "./tokens.ts";

// `POST /v2/auth/authenticate` (compat-notes, auth service v2): a usable token of (provider, user) for the
// scopes answers `completed`; otherwise the user must go through a flow, and the status says why one is
// needed — `connection_required` (no token, or one without the scopes), `token_expired` (expired and not
// refreshable) — or `pending` when one is already under way: the same auth_id and url again, so a client
// polling authenticate while the user is in the browser does not start a flow per call.

export const AuthenticateBody = z.looseObject({
  provider: ProviderId,
  scopes: z.array(Scope).max(100).nullish(),
  user_id: z.string().min(1).max(256).nullish(),
  force: z.boolean().nullish(),
});
export type AuthenticateIn = z.output<typeof AuthenticateBody>;

export const AUTHENTICATE_STATUSES = [
  "completed",
  "pending",
  "connection_required",
  "token_expired",
] as const;
export const AuthenticateResult = z.object({
  status: z.enum(AUTHENTICATE_STATUSES),
  /** The flow the user must complete (every status but `completed`). */
  auth_id: z.string().optional(),
  url: z.string().optional(),
  ...TokenFields.shape,
});
export type AuthenticateOut = z.output<typeof AuthenticateResult>;

/** A pending flow with less time than this left is not handed out again: the user could not finish it. */
const REUSE_MARGIN_SECONDS = 60;
/** A lost race on the open-flow pointer is retried this many times before starting a flow regardless. */
const POINTER_ATTEMPTS = 3;

/** What the workspace's token is worth for the requested scopes. */
export type TokenState = "fresh" | "refreshable" | "connection_required" | "token_expired";

export function tokenState(t: Token | undefined, scopes: readonly string[], now = Date.now()): TokenState {
  if (!t || !scopes.every((s) => t.scopes.includes(s))) return "connection_required";
  if (isFresh(t, now)) return "fresh";
  return t.has_refresh_token ? "refreshable" : "token_expired";
}

/** The open-flow key's part for a scope set: order and repeats do not make another set. */
export function scopesDigest(scopes: readonly string[]): string {
  const set = [...new Set(scopes)].sort();
  return createHash("sha256").update(JSON.stringify(set)).digest("base64url");
}

/** The token refreshed with its refresh token; undefined when the token endpoint refused or failed. */
async function refreshed(tenantId: string, rec: ProviderWithSecret, found: StoredToken) {
  const refresh = (await found.secret()).refresh_token;
  if (!refresh) return undefined;
  try {
    const grant = await refreshGrant(await clientCredentials(tenantId, rec), refresh);
    await saveToken(tenantId, {
      id: found.token.id,
      created_at: found.token.created_at,
      provider_id: rec.provider_id,
      user_id: found.token.user_id,
      requested_scopes: found.token.scopes,
      grant,
      previous_refresh_token: refresh,
    });
    return findToken(tenantId, rec.provider_id, found.token.user_id);
  } catch (err) {
    if (!(err instanceof TokenEndpointError)) throw err;
    logger.info("oauth refresh failed; starting a new flow", {
      tenant_id: tenantId,
      provider_id: rec.provider_id,
      reason: err.message,
    });
    return undefined;
  }
}

interface FlowRequest {
  tenantId: string;
  rec: ProviderWithSecret;
  userId: string | null;
  scopes: string[];
  redirectUri: string;
}

const openKey = (r: FlowRequest) => ({
  tenant: r.tenantId,
  provider_id: r.rec.provider_id,
  user_id: r.userId,
  scopes_digest: scopesDigest(r.scopes),
});

/** The flow still worth handing out for this request: pending, not about to expire, same client and callback. */
function stillOpen(flow: OAuthFlowRecord | undefined, r: FlowRequest): flow is OAuthFlowRecord {
  return (
    !!flow?.url_sealed &&
    flow.status === "pending" &&
    flow.expires_at > epoch() + REUSE_MARGIN_SECONDS &&
    flow.provider_record_id === r.rec.id &&
    flow.redirect_uri === r.redirectUri
  );
}

/** No condition: the pointer moves to the new flow whatever it pointed at (force). */
const ANY = Symbol("any");

/**
 * Starts a flow and points the open-flow item at it, on condition that the pointer is still what was read
 * (`seen`: the auth_id, or undefined for none); undefined when another call moved it first.
 */
async function startFlow(
  r: FlowRequest,
  status: "connection_required" | "token_expired",
  seen: string | undefined | typeof ANY,
): Promise<AuthenticateOut | undefined> {
  const { tenantId, rec } = r;
  const authId = randomUUID();
  const secret = newSecret();
  const verifier = rec.uses_pkce ? newCodeVerifier() : undefined;
  const url = authorizationUrl({
    authUrl: rec.auth_url,
    clientId: rec.client_id,
    redirectUri: r.redirectUri,
    state: formatState({ tenantId, authId, secret }),
    scopes: r.scopes,
    ...(verifier
      ? {
          codeChallenge: codeChallenge(verifier, rec.code_challenge_method),
          codeChallengeMethod: rec.code_challenge_method,
        }
      : {}),
  });
  const context = flowContext(tenantId, authId);
  const expiresAt = epoch() + FLOW_TTL_SECONDS;
  const flow: OAuthFlowRecord = {
    id: authId,
    tenant_id: tenantId,
    provider_id: rec.provider_id,
    provider_record_id: rec.id,
    user_id: r.userId,
    scopes: r.scopes,
    redirect_uri: r.redirectUri,
    state_hash: secretHash(secret),
    ...(verifier ? { verifier_sealed: await seal(verifier, context) } : {}),
    url_sealed: await seal(url, context),
    status: "pending",
    created_at: canonicalNow(),
    updated_at: canonicalNow(),
    expires_at: expiresAt,
  };
  const key = openKey(r);
  const pointer = oauthOpenFlows.putInput(
    { ...key, tenant_id: tenantId, auth_id: authId, expires_at: expiresAt },
    seen === ANY
      ? {}
      : seen === undefined
        ? CREATE_ONLY
        : { ConditionExpression: "auth_id = :seen", ExpressionAttributeValues: toItem({ ":seen": seen }) },
  );
  try {
    await transact([{ Put: oauthFlows.putInput(flow, CREATE_ONLY) }, { Put: pointer }]);
  } catch (err) {
    if (cancelCodes(err)?.[1] === "ConditionalCheckFailed") return undefined;
    throw err;
  }
  return { status, url, auth_id: authId };
}

/**
 * `completed` with a usable token (refreshed if need be); else `pending` with the flow already under way for
 * the same provider, user and scopes; else a new flow, `connection_required` or `token_expired`. `force`
 * skips both: a new flow, `connection_required` (the caller asked to reconnect).
 */
export async function authenticate(
  tenantId: string,
  body: AuthenticateIn,
  redirectUri: string,
): Promise<AuthenticateOut> {
  const rec = await getProviderWithSecret(tenantId, body.provider);
  if (!rec) throw new NotFound("OAuth provider not found");
  const r: FlowRequest = {
    tenantId,
    rec,
    userId: body.user_id ?? null,
    scopes: body.scopes ?? rec.scopes ?? [],
    redirectUri,
  };
  if (body.force) return (await startFlow(r, "connection_required", ANY))!;
  const found = await findToken(tenantId, rec.provider_id, r.userId);
  let state = tokenState(found?.token, r.scopes);
  if (state === "fresh" && found) return completed(found);
  for (let attempt = 1; ; attempt++) {
    // The open flow comes before a refresh: a client polling while the user connects does not hit the
    // token endpoint on every call.
    const pointer = await oauthOpenFlows.get(openKey(r));
    const flow = pointer && (await oauthFlows.get({ tenant: tenantId, id: pointer.auth_id }));
    if (stillOpen(flow, r)) {
      const url = await unseal(flow.url_sealed!, flowContext(tenantId, flow.id));
      return { status: "pending", url, auth_id: flow.id };
    }
    if (state === "refreshable" && found) {
      const t = await refreshed(tenantId, rec, found);
      if (t) return completed(t);
      state = "token_expired";
    }
    const status = state === "token_expired" ? "token_expired" : "connection_required";
    const started = await startFlow(r, status, attempt < POINTER_ATTEMPTS ? pointer?.auth_id : ANY);
    if (started) return started;
  }
}
