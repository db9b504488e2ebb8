import { createHash, randomBytes } from "node:crypto";
import { SELF_HOSTED_PREFIX } from "../config.ts";

// The pure parts of the OAuth 2.0 authorization-code flow (RFC 6749, PKCE RFC 7636): the state we hand out
// and read back, the URLs we build, and the token endpoint's answer. Everything here that reads untrusted
// input returns a verdict and never throws.

// — state —
// `<tenant, base64url>.<auth_id>.<secret>`: the callback has no API key, so the state names the flow's
// workspace and record; only the secret's SHA-256 is stored, and the flow accepts it once.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;
const B64URL = /^[A-Za-z0-9_-]{1,400}$/;
const MAX_STATE = 1024;

export interface FlowState {
  tenantId: string;
  authId: string;
  secret: string;
}

const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export const newSecret = () => randomBytes(32).toString("base64url");

export function formatState(s: FlowState): string {
  return `${Buffer.from(s.tenantId, "utf8").toString("base64url")}.${s.authId}.${s.secret}`;
}

/** The state a callback carries, or undefined when it is not one we could have issued. */
export function parseState(raw: unknown): FlowState | undefined {
  if (typeof raw !== "string" || raw.length > MAX_STATE) return undefined;
  const parts = raw.split(".");
  if (parts.length !== 3) return undefined;
  const [tenantPart, authId, secret] = parts;
  if (!B64URL.test(tenantPart) || !UUID.test(authId) || !SECRET.test(secret)) return undefined;
  const tenantId = Buffer.from(tenantPart, "base64url").toString("utf8");
  // Only the canonical encoding of valid UTF-8 round-trips: anything else was not issued by us.
  if (Buffer.from(tenantId, "utf8").toString("base64url") !== tenantPart) return undefined;
  if (tenantId.length === 0 || tenantId.length > 256 || hasControl(tenantId)) return undefined;
  return { tenantId, authId, secret };
}

// — PKCE —

export const newCodeVerifier = newSecret;

export function codeChallenge(verifier: string, method: "S256" | "plain"): string {
  return method === "plain" ? verifier : createHash("sha256").update(verifier, "ascii").digest("base64url");
}

// — URLs —

export interface AuthorizationRequest {
  authUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: "S256" | "plain";
}

/** The provider's authorization URL with our parameters (its own query parameters kept). */
export function authorizationUrl(r: AuthorizationRequest): string {
  const url = new URL(r.authUrl);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", r.clientId);
  url.searchParams.set("redirect_uri", r.redirectUri);
  url.searchParams.set("state", r.state);
  if (r.scopes.length) url.searchParams.set("scope", r.scopes.join(" "));
  if (r.codeChallenge) {
    url.searchParams.set("code_challenge", r.codeChallenge);
    url.searchParams.set("code_challenge_method", r.codeChallengeMethod ?? "S256");
  }
  return url.toString();
}

export interface RequestOrigin {
  headers: Record<string, string | undefined>;
  domainName?: string;
  rawPath?: string;
}

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** A Host header worth building a URL on: plain syntax that a URL keeps exactly as written. */
function validHost(h: unknown): h is string {
  if (typeof h !== "string" || h.length > 300 || !HOST.test(h)) return false;
  try {
    return new URL(`http://${h}/`).host === h.toLowerCase().replace(/:80$/, "");
  } catch {
    return false;
  }
}

/**
 * The redirect_uri of a provider: PUBLIC_BASE_URL when set, else the scheme and host the request came in on,
 * under /api-host when the request used that prefix. A malformed Host header falls back to the API's domain.
 */
export function callbackUrl(
  origin: RequestOrigin,
  providerId: string,
  opts: { publicBaseUrl?: string; local: boolean },
): string {
  const prefix =
    origin.rawPath === SELF_HOSTED_PREFIX || origin.rawPath?.startsWith(`${SELF_HOSTED_PREFIX}/`)
      ? SELF_HOSTED_PREFIX
      : "";
  const path = `${prefix}/v2/auth/callback/${encodeURIComponent(providerId)}`;
  if (opts.publicBaseUrl) return `${opts.publicBaseUrl.replace(/\/+$/, "")}${path}`;
  const proto = origin.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase();
  const scheme = proto === "http" || proto === "https" ? proto : opts.local ? "http" : "https";
  const host = [origin.headers.host, origin.domainName].find(validHost);
  return `${scheme}://${host ?? "localhost"}${path}`;
}
