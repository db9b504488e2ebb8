import { safeRegex } from "../safe-regex.ts";

// CORS, as the reference LangGraph server answers it (hono's cors() middleware): by default any origin, hono's
// methods, the headers a preflight asks for, no credentials, and content-location and x-pagination-total
// exposed, and retry-after (a 429's, so a browser client can wait it out). A deployment's langgraph.json `http.cors` replaces that for its agent server. Every OPTIONS request is
// a preflight (answered 204, never authenticated: a browser sends no API key with it); other responses, errors
// included, carry Access-Control-Allow-Origin and Access-Control-Expose-Headers.
//
// Where the reference differs from itself (JS and Python servers) or from what a browser needs, this follows
// the safer reading: `allow_origin_regex` must match the whole origin (as Starlette's fullmatch), origins
// allowed by the list or the regex both count, "*" in `allow_origins` means any origin, a key left out takes
// its default (methods, exposed headers), and with credentials the request's origin is echoed instead of "*"
// (a browser refuses "*" with credentials).
//
// An Origin longer than MAX_ORIGIN_LENGTH is allowed by nothing (a real one is a scheme, a DNS name of at most
// 253 characters and a port), so it bounds the work of the origin regex.

export const DEFAULT_METHODS = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"];
/** Exposed always: the SDK reads them (pagination, the run a request created, how long a 429 asks to wait). */
export const REQUIRED_EXPOSE = ["content-location", "x-pagination-total", "retry-after"];
/** Longest Origin any policy allows. */
export const MAX_ORIGIN_LENGTH = 300;

/**
 * A CORS configuration as the reference server takes it (langgraph.json `http.cors`, its CorsConfig; a deployment
 * record stores it in this shape). The edge hands a deployment's in (shared/agent/edge/cors.ts).
 */
export interface CorsOptions {
  allow_origins?: string[];
  allow_origin_regex?: string;
  allow_methods?: string[];
  allow_headers?: string[];
  allow_credentials?: boolean;
  expose_headers?: string[];
  max_age?: number;
}

export interface CorsPolicy {
  /** The Access-Control-Allow-Origin value for a request's Origin, or none when the origin is not allowed. */
  allowOrigin(origin: string): string | undefined;
  methods: string[];
  /** Empty: whatever the preflight's Access-Control-Request-Headers asks. */
  headers: string[];
  credentials: boolean;
  expose: string[];
  maxAge?: number;
}

/** The reference server's defaults (no `http.cors`). */
export const DEFAULT_CORS: CorsPolicy = {
  allowOrigin: () => "*",
  methods: DEFAULT_METHODS,
  headers: [],
  credentials: false,
  expose: REQUIRED_EXPOSE,
};

/** The policy a langgraph.json `http.cors` describes; none (or null) → the defaults. */
export function corsPolicy(config?: CorsOptions | null): CorsPolicy {
  if (!config) return DEFAULT_CORS;
  const credentials = config.allow_credentials === true;
  const origins = new Set(config.allow_origins ?? []);
  // Linear time: safeRegex admits only patterns V8's linear engine runs, and safe-regex.ts makes V8 fall back to
  // it after a few backtracks; an unsafe pattern (a record older than the build's check) matches nothing.
  const source = config.allow_origin_regex;
  const regex = source && safeRegex(source) ? new RegExp(`^(?:${source})$`) : undefined;
  const any = origins.has("*");
  const expose = [...(config.expose_headers ?? [])];
  const present = new Set(expose.map((h) => h.toLowerCase()));
  for (const h of REQUIRED_EXPOSE) if (!present.has(h)) expose.push(h);
  return {
    allowOrigin: (origin) => {
      if (origin.length > MAX_ORIGIN_LENGTH) return undefined;
      if (any) return credentials && origin ? origin : credentials ? undefined : "*";
      if (!origin) return undefined;
      return origins.has(origin) || regex?.test(origin) ? origin : undefined;
    },
    methods: config.allow_methods?.length
      ? config.allow_methods.map((m) => m.toUpperCase())
      : DEFAULT_METHODS,
    headers: config.allow_headers ?? [],
    credentials,
    expose,
    ...(config.max_age !== undefined ? { maxAge: config.max_age } : {}),
  };
}

type Headers = Record<string, string | string[] | undefined>;
const header = (headers: Headers, name: string): string => {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return (Array.isArray(v) ? v.join(",") : v) ?? "";
};

/** Every OPTIONS request is a preflight, as in hono. */
export const isPreflight = (method: string | undefined): boolean => method?.toUpperCase() === "OPTIONS";

/**
 * The CORS headers of the answer to a request (`headers` with lower-case names, as Node and the front give
 * them): a preflight's when `method` is OPTIONS, else those of an actual response.
 */
export function corsHeaders(policy: CorsPolicy, method: string, headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  const vary: string[] = [];
  const allowed = policy.allowOrigin(header(headers, "origin"));
  if (allowed) out["access-control-allow-origin"] = allowed;
  if (allowed && allowed !== "*") vary.push("Origin");
  if (policy.credentials) out["access-control-allow-credentials"] = "true";
  if (policy.expose.length) out["access-control-expose-headers"] = policy.expose.join(",");
  if (isPreflight(method)) {
    if (policy.maxAge !== undefined) out["access-control-max-age"] = String(policy.maxAge);
    if (policy.methods.length) out["access-control-allow-methods"] = policy.methods.join(",");
    const asked = header(headers, "access-control-request-headers")
      .split(/\s*,\s*/)
      .filter(Boolean);
    const allow = policy.headers.length ? policy.headers : asked;
    if (allow.length) {
      out["access-control-allow-headers"] = allow.join(",");
      vary.push("Access-Control-Request-Headers");
    }
  }
  if (vary.length) out.vary = vary.join(", ");
  return out;
}

/** A preflight's answer: 204, no body. */
export function preflightResult(policy: CorsPolicy, headers: Headers) {
  return { statusCode: 204, headers: corsHeaders(policy, "OPTIONS", headers) };
}

/** Adds CORS headers to a response's own, merging `vary`. */
export function withCors(
  own: Record<string, string> | undefined,
  cors: Record<string, string>,
): Record<string, string> {
  const out = { ...(own ?? {}) };
  for (const [k, v] of Object.entries(cors)) {
    const existing = Object.keys(out).find((name) => name.toLowerCase() === k);
    if (k === "vary" && existing) out[existing] = `${out[existing]}, ${v}`;
    else {
      if (existing) delete out[existing];
      out[k] = v;
    }
  }
  return out;
}
