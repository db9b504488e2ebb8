import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { config } from "../config.ts";

// What an export destination may not be: a prefix that reads as another path than it says, the platform's own
// service endpoints (locally S3, DynamoDB, the AWS emulator and the policy proxies listen on loopback: exports
// there would write past the policy proxy into other workspaces' prefixes), or the platform's own keys.

/** Why a prefix (leading and trailing slashes already dropped) is refused, or undefined. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix === "") return undefined;
  if ([...prefix].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return "prefix must not hold control characters";
  if (prefix.includes("\\")) return "prefix must not hold backslashes";
  for (const segment of prefix.split("/")) {
    if (segment === "") return "prefix must not hold empty segments (//)";
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {}
    // An encoded dot or separator reads as one to a server that decodes keys once more.
    if ([segment, decoded].some((s) => s === "." || s === ".." || (s !== segment && /[/\\]/.test(s))))
      return "prefix must not hold . or .. segments (plain or percent-encoded)";
  }
  return undefined;
}

/** Why the key pair is refused: the platform's own access key ids are never a workspace's. */
export function credentialsProblem(accessKeyId: string): string | undefined {
  return config.export.platformAccessKeyIds.includes(accessKeyId.trim())
    ? "credentials must be the workspace's own, not the platform's"
    : undefined;
}

export const OWN_ENDPOINT = "endpoint_url must not name one of the platform's own services";

const portOf = (u: URL) => Number(u.port || (u.protocol === "https:" ? 443 : 80));
const hostOf = (u: URL) =>
  u.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();

const family = (a: string) => (isIP(a) === 6 ? "ipv6" : "ipv4");

/** Loopback or unspecified: this machine under any of its names (127/8, ::1, 0.0.0.0, ::; IPv4-mapped too). */
const SELF = new BlockList();
SELF.addSubnet("127.0.0.0", 8, "ipv4");
SELF.addAddress("0.0.0.0", "ipv4");
SELF.addAddress("::1", "ipv6");
SELF.addAddress("::", "ipv6");
const isSelf = (a: string) => isIP(a) !== 0 && SELF.check(a, family(a));

/** The same host: both this machine, or one address in any of its forms (an IPv4-mapped IPv6 is its IPv4). */
function sameHost(a: string, b: string): boolean {
  if (isSelf(a) && isSelf(b)) return true;
  if (!isIP(a) || !isIP(b)) return false;
  const one = new BlockList();
  one.addAddress(b, family(b));
  return one.check(a, family(a));
}

type Resolver = (host: string) => Promise<string[]>;
const resolveAll: Resolver = async (h) =>
  (await lookup(h, { all: true, verbatim: true })).map((a) => a.address);

async function addressesOf(host: string, resolve: Resolver): Promise<string[]> {
  if (isIP(host)) return [host];
  if (host === "localhost" || host.endsWith(".localhost")) return ["127.0.0.1", "::1"];
  return resolve(host).catch(() => []);
}

/** Whether `address` on `port` is one of the platform's own endpoints (`theirs`: their resolved addresses). */
function isOwn(address: string, port: number, own: { port: number; addresses: string[] }[]): boolean {
  return own.some((o) => o.port === port && o.addresses.some((t) => sameHost(address, t)));
}

async function ownEndpoints(resolve: Resolver) {
  return Promise.all(
    config.export.platformEndpoints.map(async (u) => ({
      port: portOf(u),
      addresses: await addressesOf(hostOf(u), resolve),
    })),
  );
}

/** Why `endpoint_url` is refused as the platform's own (compared after resolution, any alias), or undefined. */
export async function ownEndpointProblem(
  raw: string,
  resolve: Resolver = resolveAll,
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const port = portOf(url);
  const own = (await ownEndpoints(resolve)).filter((o) => o.port === port);
  if (!own.length) return undefined;
  const addresses = await addressesOf(hostOf(url), resolve);
  return addresses.some((a) => isOwn(a, port, own)) ? OWN_ENDPOINT : undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup` for the sockets of a destination on `port` that refuses the platform's own endpoints, so a name
 * that resolved elsewhere when the destination was created cannot later be pointed at one (DNS rebinding).
 */
export function notOwnLookup(port: number) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : "");
      const own = config.export.platformEndpoints
        .filter((u) => portOf(u) === port)
        .map((u) => ({ port, addresses: isIP(hostOf(u)) ? [hostOf(u)] : ["127.0.0.1", "::1"] }));
      if (!addresses.length || addresses.some((a) => isOwn(a.address, port, own))) {
        const refused: NodeJS.ErrnoException = new Error(`endpoint host ${hostname}: ${OWN_ENDPOINT}`);
        refused.code = "EOWNENDPOINT";
        return callback(refused, options.all ? [] : "");
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

export const destinationPort = (endpointUrl: string) => portOf(new URL(endpointUrl));
