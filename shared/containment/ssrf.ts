import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { config } from "../config.ts";

// The SSRF guard for every URL the platform calls on a caller's behalf (export endpoints, OAuth token
// endpoints, source-code API hosts, run webhooks): no reaching loopback, the VPC or the cloud's metadata service.
// Which addresses are internal (isInternalAddress) and the checks of a URL when it is saved; where a request may
// go when it is made is egress.ts's egressTarget (request.ts), the rule of sandboxed code's own egress.

function ipv4Internal(address: string): boolean {
  const [a, b, c] = address.split(".").map(Number);
  return (
    a === 0 || // "this network", 0.0.0.0
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, instance metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF protocol assignments, documentation
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224 // multicast, reserved, broadcast
  );
}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tail allowed), or undefined when malformed. */
function ipv6Groups(address: string): number[] | undefined {
  let s = address;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    if (isIP(v4[1]) !== 4) return undefined;
    const [a, b, c, d] = v4[1].split(".").map(Number);
    tail.push((a << 8) | b, (c << 8) | d);
    s = `${s.slice(0, -v4[1].length)}0:0`; // placeholder groups, replaced below
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const part = (h: string) => (h === "" ? [] : h.split(":").map((g) => Number.parseInt(g, 16)));
  const head = part(halves[0]);
  const rest = halves.length === 2 ? part(halves[1]) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 0) return undefined;
  const groups = [...head, ...Array(fill).fill(0), ...rest];
  if (groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * Whether an IP address is loopback, link-local, private, unspecified or otherwise not a public endpoint
 * (including IPv4 addresses embedded in IPv6: mapped, compatible, NAT64, 6to4). Anything that is not an IP
 * address counts as internal. Pure; never throws.
 */
export function isInternalAddress(address: string): boolean {
  if (typeof address !== "string") return true;
  const kind = isIP(address);
  if (kind === 4) return ipv4Internal(address);
  if (kind !== 6 || address.includes("%")) return true; // not an IP, or scoped (link-local) IPv6
  const g = ipv6Groups(address.toLowerCase());
  if (!g) return true;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return true; // ::
  if (zeros(0, 7) && g[7] === 1) return true; // ::1
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return ipv4Internal(v4Of(g[6], g[7])); // mapped, compatible
  if (g[0] === 0x64 && g[1] === 0xff9b) return g[2] !== 0 || ipv4Internal(v4Of(g[6], g[7])); // NAT64 (/96 and local /48)
  if (g[0] === 0x2002) return ipv4Internal(v4Of(g[1], g[2])); // 6to4
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return true; // Teredo, documentation
  if (g[0] === 0x100 && zeros(1, 4)) return true; // discard-only
  return (
    (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0 || g[0] >= 0xff00
  );
}

const hostOf = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();

/** Whether `raw` is an http(s) URL without credentials in it (where it leads is another check). Never throws. */
export function urlShapeProblem(raw: string, field: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${field} is not a valid URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${field} must be an http or https URL`;
  if (url.username || url.password) return `${field} must not carry credentials`;
  return undefined;
}

export interface UrlRules {
  /** The field named in messages. */
  field?: string;
  /** Outside local mode, only https (a secret travels with the request). */
  httpsOnly?: boolean;
}

/**
 * The checks of a URL that need no DNS: an http(s) URL without credentials in it and — outside local mode —
 * not a loopback/private/link-local address or a local-only name. Pure; never throws.
 * Returns the problem, or undefined when the URL passes (a host name still needs `endpointProblem`).
 */
export function endpointUrlProblem(raw: string, local: boolean, rules: UrlRules = {}): string | undefined {
  const field = rules.field ?? "endpoint_url";
  const shape = urlShapeProblem(raw, field);
  if (shape || local) return shape;
  const url = new URL(raw);
  if (rules.httpsOnly && url.protocol !== "https:") return `${field} must be an https URL`;
  const host = hostOf(url);
  if (
    host === "" ||
    host === "localhost" ||
    /\.(localhost|local|localdomain|internal)$/.test(host) ||
    (isIP(host) !== 0 && isInternalAddress(host))
  )
    return `${field} must be a public endpoint`;
  return undefined;
}

export type Resolver = (host: string) => Promise<string[]>;
const resolveAll: Resolver = async (h) =>
  (await lookup(h, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks a URL: `endpointUrlProblem`, then (outside local mode) that no address the host name resolves to is
 * internal. A name that does not resolve passes here: the request itself then fails. Never throws.
 */
export async function endpointProblem(
  raw: string,
  local = config.localMode,
  resolve: Resolver = resolveAll,
  rules: UrlRules = {},
): Promise<string | undefined> {
  const problem = endpointUrlProblem(raw, local, rules);
  if (problem || local) return problem;
  const host = hostOf(new URL(raw));
  if (isIP(host)) return undefined;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return undefined;
  }
  if (addresses.some(isInternalAddress)) return `${rules.field ?? "endpoint_url"} must be a public endpoint`;
  return undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup` for sockets that refuses internal addresses, so a host name that resolved to a public
 * address when the URL was checked cannot later be re-pointed at an internal one (DNS rebinding).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, options.all ? [] : "");
    const internal = addresses.find((a) => isInternalAddress(a.address));
    if (internal || !addresses.length) {
      const refused: NodeJS.ErrnoException = new Error(
        `endpoint host ${hostname} resolves to a non-public address`,
      );
      refused.code = "EINTERNALADDRESS";
      return callback(refused, options.all ? [] : "");
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
