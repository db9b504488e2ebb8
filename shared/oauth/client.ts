import { outboundRequest } from "../containment/request.ts";
import { TokenEndpointError, UpstreamError } from "../errors.ts";

// Our side of a provider's token endpoint (RFC 6749 §4.1.3, §6): the code exchange and the refresh, with
// the client authenticated as the provider is configured. The endpoint's answer is untrusted input.
export type TokenEndpointAuthMethod = "none" | "client_secret_basic" | "client_secret_post";

export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret?: string;
  method: TokenEndpointAuthMethod;
}

export interface TokenGrant {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  /** Seconds the access token lives, when the endpoint said. */
  expires_in?: number;
  /** Granted scopes, when the endpoint said (else the requested ones apply). */
  scopes?: string[];
}

const MAX_TOKEN = 16_384;
const TEN_YEARS = 10 * 365 * 24 * 3600;

/** Printable ASCII only, bounded: provider text ends up in records and responses. */
export const printable = (s: string, max = 300) => s.replace(/[^\x20-\x7e]/g, "?").slice(0, max);

function decodeBody(contentType: string | undefined, body: string): Record<string, unknown> | undefined {
  const type = (contentType ?? "").toLowerCase();
  if (type.includes("application/x-www-form-urlencoded")) {
    return Object.fromEntries(new URLSearchParams(body));
  }
  try {
    const json = JSON.parse(body);
    return json && typeof json === "object" && !Array.isArray(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

/** The token endpoint's answer as a grant, or the TokenEndpointError it amounts to. Never throws. */
export function parseTokenResponse(
  status: number,
  contentType: string | undefined,
  body: string,
): TokenGrant | TokenEndpointError {
  const doc = decodeBody(contentType, body);
  // Some providers (GitHub) answer 200 with an `error` field.
  if (doc && typeof doc.error === "string" && doc.error) {
    const desc = typeof doc.error_description === "string" ? `: ${doc.error_description}` : "";
    return new TokenEndpointError(printable(`${doc.error}${desc}`), status < 500);
  }
  if (status < 200 || status > 299)
    return new TokenEndpointError(`token endpoint answered HTTP ${status}`, status === 400 || status === 401);
  if (!doc) return new TokenEndpointError("token endpoint answered with something other than a token", false);
  const token = doc.access_token;
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN)
    return new TokenEndpointError("token endpoint answered without an access_token", false);
  const grant: TokenGrant = { access_token: token };
  if (typeof doc.refresh_token === "string" && doc.refresh_token && doc.refresh_token.length <= MAX_TOKEN)
    grant.refresh_token = doc.refresh_token;
  if (typeof doc.token_type === "string" && doc.token_type.length <= 64) grant.token_type = doc.token_type;
  const expires = typeof doc.expires_in === "string" ? Number(doc.expires_in) : doc.expires_in;
  // Whole seconds: an expiry under a second says nothing usable (as if it were absent).
  if (typeof expires === "number" && Number.isFinite(expires) && expires >= 1)
    grant.expires_in = Math.min(Math.floor(expires), TEN_YEARS);
  if (typeof doc.scope === "string")
    grant.scopes = doc.scope
      .split(/[\s,]+/)
      .filter((s) => s.length > 0 && s.length <= 256)
      .slice(0, 100);
  return grant;
}

/** The form and headers of a token request, the client authenticated per its method (RFC 6749 §2.3.1). */
export function tokenRequest(client: ClientCredentials, params: Record<string, string>) {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (client.method === "client_secret_basic") {
    const user = encodeURIComponent(client.clientId);
    const pass = encodeURIComponent(client.clientSecret ?? "");
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
  } else {
    form.set("client_id", client.clientId);
    if (client.method === "client_secret_post" && client.clientSecret)
      form.set("client_secret", client.clientSecret);
  }
  return { headers, body: form.toString() };
}

async function callTokenEndpoint(
  client: ClientCredentials,
  params: Record<string, string>,
): Promise<TokenGrant> {
  const { headers, body } = tokenRequest(client, params);
  let res: Awaited<ReturnType<typeof outboundRequest>>;
  try {
    res = await outboundRequest(client.tokenUrl, { method: "POST", headers, body, maxBytes: 256 * 1024 });
  } catch (err) {
    if (err instanceof UpstreamError)
      throw new TokenEndpointError(`token endpoint unreachable: ${err.message}`, false);
    throw err;
  }
  const out = parseTokenResponse(res.status, res.headers["content-type"], res.body);
  if (out instanceof TokenEndpointError) throw out;
  return out;
}

export function exchangeCode(
  client: ClientCredentials,
  p: { code: string; redirectUri: string; codeVerifier?: string },
): Promise<TokenGrant> {
  return callTokenEndpoint(client, {
    grant_type: "authorization_code",
    code: p.code,
    redirect_uri: p.redirectUri,
    ...(p.codeVerifier ? { code_verifier: p.codeVerifier } : {}),
  });
}

export function refreshGrant(client: ClientCredentials, refreshToken: string): Promise<TokenGrant> {
  return callTokenEndpoint(client, { grant_type: "refresh_token", refresh_token: refreshToken });
}
