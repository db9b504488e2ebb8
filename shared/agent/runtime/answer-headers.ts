import { parseMediaType } from "../../http/media-type.ts";

// What a deployment's answers may carry to a browser. A deployment's content must never act with an origin it
// does not own. On the platform's shared origin (the /agents/{id} prefix, the console's origin) an answer is put
// in a CSP sandbox (an opaque origin: no storage, cookies or service worker of the console) unless its one
// Content-Type is a type no browser runs (an allow-list: a list, a malformed or a missing type is sandboxed), and
// it sets no cookie. On a deployment's own origin it may set host-only cookies only (a Domain= cookie would reach
// every other deployment's origin). No answer anywhere may widen a service worker's scope. And a request that
// carried a platform key may not be redirected out of the deployment: the SDKs (fetch follows a 307/308 with the
// method, the body and every custom header, X-Api-Key included, to any host) and the console would send the key
// wherever the deployment's Location points — to a host of its author's, or to the platform API on the same
// origin (secreview3: a graph answering the SDK's threads.search with a 307 got the workspace's key).

/** The sandbox a deployment's documents get: their scripts and forms run, in an opaque origin. */
export const HTML_SANDBOX = "sandbox allow-scripts allow-forms allow-popups allow-downloads allow-modals";

// Types a browser shows as data with nosniff: JSON, SSE, plain text, raster images (SVG can script).
const PASSIVE = new Set([
  "application/json",
  "text/event-stream",
  "text/plain",
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
]);

type HeaderValue = string | string[] | number | undefined;
type Headers = Record<string, HeaderValue>;

const values = (v: HeaderValue): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)];

/**
 * Whether an answer with these Content-Type values (every value of every header of that name) is passive: exactly
 * one value, parsed strictly (shared/http/media-type.ts) as a type on the allow-list or `application/*+json`.
 */
export function isPassive(contentTypes: string[]): boolean {
  if (contentTypes.length !== 1) return false;
  const t = parseMediaType(contentTypes[0]);
  if (!t) return false;
  return PASSIVE.has(t.essence) || (t.type === "application" && /^[^+]+\+json$/.test(t.subtype));
}

/** A cookie with a Domain attribute (RFC 6265 §5.2: any attribute whose name, trimmed, is "domain"). */
const hasDomain = (setCookie: string): boolean =>
  setCookie
    .split(";")
    .slice(1)
    .some((attr) => attr.split("=")[0].trim().toLowerCase() === "domain");

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, the runtime's to the platform, and are never
 * passed on; the platform frames its own answer.
 */
const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** A runtime's answer headers as the platform passes them on (see above); names lower-cased. */
export function containedHeaders(headers: Headers, opts: { sharedOrigin: boolean }): Headers {
  const merged = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    merged.set(key, [...(merged.get(key) ?? []), ...values(value)]);
  }
  // What Connection names is hop-by-hop too.
  const named = (merged.get("connection") ?? [])
    .flatMap((v) => v.split(","))
    .map((n) => n.trim().toLowerCase());
  for (const name of [...HOP_BY_HOP, ...named]) merged.delete(name);
  merged.delete("service-worker-allowed");
  const cookies = merged.get("set-cookie") ?? [];
  const kept = opts.sharedOrigin ? [] : cookies.filter((c) => !hasDomain(c));
  if (kept.length) merged.set("set-cookie", kept);
  else merged.delete("set-cookie");
  if (opts.sharedOrigin) {
    // Clear-Site-Data there would wipe the console's storage; Refresh would navigate a console tab anywhere.
    merged.delete("clear-site-data");
    merged.delete("refresh");
    // A second policy is enforced besides the deployment's own: the sandbox holds whatever that one says.
    if (!isPassive(merged.get("content-type") ?? []))
      merged.set("content-security-policy", [...(merged.get("content-security-policy") ?? []), HTML_SANDBOX]);
    merged.set("x-content-type-options", ["nosniff"]);
  }
  // Names are the runtime's: no prototype for a `__proto__` to set.
  const out: Headers = Object.create(null);
  for (const [name, list] of merged) if (list.length) out[name] = list.length === 1 ? list[0] : list;
  return out;
}

/** Headers with one value each, as Lambda's streamed answer takes them: several policies are one comma list. */
export function singleValued(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  return out;
}

/** Where a deployment's answer was asked for: the request's Host and the deployment's path on it. */
export interface AnswerPlace {
  host: string;
  /** `/agents/<id>` on the shared origin, `` at the deployment's own origin. */
  prefix: string;
}

// Escaped separators and dots, which a server may read as `/` or `..` after the check.
const ESCAPED_PATH = /%(2f|5c|2e)/i;

/**
 * Whether an answer is a redirect that leaves the deployment: a Location that, resolved as a browser resolves it
 * against the request (backslashes, dot segments, scheme-relative forms), names another host or scheme than
 * http(s), a path outside the deployment's (the platform's own API on the shared origin), or escaped separators.
 * A Location on any other status (201's) is left alone: no client follows it.
 */
export function redirectLeaves(status: number, headers: Headers, place: AnswerPlace): boolean {
  if (status < 300 || status > 399) return false;
  const locations = Object.entries(headers)
    .filter(([name]) => name.toLowerCase() === "location")
    .flatMap(([, v]) => values(v));
  if (locations.length === 0) return false;
  if (locations.length > 1) return true;
  let to: URL;
  try {
    to = new URL(locations[0], `http://${place.host}${place.prefix}/`);
  } catch {
    return true;
  }
  if (!["http:", "https:"].includes(to.protocol) || to.host !== place.host) return true;
  if (to.username || to.password || ESCAPED_PATH.test(to.pathname)) return true;
  return place.prefix !== "" && to.pathname !== place.prefix && !to.pathname.startsWith(`${place.prefix}/`);
}
