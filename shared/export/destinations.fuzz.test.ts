import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { endpointProblem, endpointUrlProblem, isInternalAddress } from "../containment/ssrf.ts";
import { toValidationIssues } from "../http/validation.ts";
import { DestinationCreate } from "./destination-schemas.ts";
import { classifyS3Error } from "./s3-errors.ts";

// Untrusted input: endpoint URLs, addresses DNS may answer with, destination bodies, SDK errors. Arbitrary
// values give a verdict, never a throw; no rendering of an internal IPv4 address gets through.
beforeEach(() => {
  vi.stubEnv("PLATFORM_LOCAL", "0");
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const noDns = async () => {
  throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
};
const octet = fc.nat(255);
const anyUrlish = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.ipV4().map((ip) => `http://${ip}:9000/`),
  fc.ipV6().map((ip) => `https://[${ip}]/`),
  fc
    .tuple(fc.constantFrom("http://", "https://", "ftp://", "//", ""), fc.string({ maxLength: 60 }))
    .map(([s, rest]) => s + rest),
);

/** Internal IPv4 addresses: loopback, private, link-local (metadata), CGNAT, unspecified. */
const internalV4 = fc.oneof(
  fc.tuple(fc.constant(127), octet, octet, octet),
  fc.tuple(fc.constant(10), octet, octet, octet),
  fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
  fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
  fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
  fc.tuple(fc.constant(0), octet, octet, octet),
);
const hex4 = (n: number) => n.toString(16);
/** Ways to write one IPv4 address in a URL host that all connect to it. */
const renderings = ([a, b, c, d]: number[]) => {
  const dotted = `${a}.${b}.${c}.${d}`;
  const int = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const hi = hex4((a << 8) | b);
  const lo = hex4((c << 8) | d);
  return [
    dotted,
    `${dotted}.`,
    String(int),
    `0x${int.toString(16)}`,
    [a, b, c, d].map((x) => `0x${hex4(x)}`).join("."),
    [a, b, c, d].map((x) => `0${x.toString(8)}`).join("."),
    `[::ffff:${dotted}]`,
    `[::ffff:${hi}:${lo}]`,
    `[0:0:0:0:0:ffff:${hi}:${lo}]`,
    `[::${dotted}]`,
    `[64:ff9b::${dotted}]`,
    `[2002:${hi}:${lo}::1]`,
  ];
};

describe("destination input fuzz", () => {
  it("endpointUrlProblem and endpointProblem answer every string with ok or a reason", async () => {
    await fc.assert(
      fc.asyncProperty(anyUrlish, async (raw) => {
        const sync = endpointUrlProblem(raw, false);
        expect(sync === undefined || typeof sync === "string").toBe(true);
        const full = await endpointProblem(raw, false, noDns);
        expect(full === undefined || typeof full === "string").toBe(true);
        if (sync) expect(full).toBe(sync);
        // Local mode only relaxes: what it refuses, the cloud refuses too.
        if (endpointUrlProblem(raw, true) !== undefined) expect(sync).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });

  it("an arbitrary endpoint_url in a body is accepted or a 422 at body.config.endpoint_url", () => {
    fc.assert(
      fc.property(anyUrlish, (endpoint_url) => {
        const r = DestinationCreate.safeParse({
          display_name: "d",
          config: { bucket_name: "b-1", endpoint_url },
        });
        if (r.success) {
          const kept = r.data.config.endpoint_url;
          expect(kept == null || endpointUrlProblem(kept, false) === undefined).toBe(true);
        } else {
          const issues = toValidationIssues("body", r.error);
          for (const i of issues) {
            expect(i.loc).toEqual(["body", "config", "endpoint_url"]);
            expect(typeof i.msg).toBe("string");
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("no rendering of an internal IPv4 address passes outside local mode", () => {
    fc.assert(
      fc.property(internalV4, fc.constantFrom("http", "https"), fc.nat(65535), (ip, scheme, port) => {
        for (const host of renderings(ip)) {
          const url = `${scheme}://${host}:${port}/x`;
          expect(endpointUrlProblem(url, false), url).toBeDefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it("an accepted IP-literal endpoint is a public address", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.ipV4(),
          fc.ipV6().map((ip) => `[${ip}]`),
        ),
        (host) => {
          const url = `http://${host}/`;
          if (endpointUrlProblem(url, false) !== undefined) return;
          const normalised = new URL(url).hostname.replace(/^\[|\]$/g, "");
          expect(isInternalAddress(normalised), url).toBe(false);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("a host name passes only when every address it resolves to is public", async () => {
    const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(fc.array(address, { maxLength: 6 }), async (addresses) => {
        const verdict = await endpointProblem("https://s3.example.com/", false, async () => addresses);
        expect(verdict === undefined).toBe(!addresses.some(isInternalAddress));
      }),
      { numRuns: 1000 },
    );
  });

  it("isInternalAddress answers every string with a boolean", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4Extended(), fc.ipV6()), (s) => {
        expect(typeof isInternalAddress(s)).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("classifyS3Error gives a known kind and a message for anything thrown", () => {
    const kinds = ["access_denied", "bucket_invalid", "key_id", "endpoint", "retryable"];
    const errorLike = fc.record(
      {
        name: fc.oneof(fc.string(), fc.constantFrom("AccessDenied", "NoSuchBucket", "Unknown", "NotFound")),
        message: fc.anything(),
        Code: fc.anything(),
        code: fc.oneof(fc.string(), fc.constantFrom("ECONNREFUSED", "ETIMEDOUT")),
        cause: fc.anything(),
        $metadata: fc.oneof(
          fc.anything(),
          fc.record({ httpStatusCode: fc.integer({ min: 100, max: 599 }), requestId: fc.string() }),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), errorLike), (err) => {
        const c = classifyS3Error(err);
        expect(kinds).toContain(c.kind);
        expect(typeof c.message).toBe("string");
      }),
      { numRuns: 2000 },
    );
  });

  it("the create schema accepts or rejects any JSON without throwing", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        expect(() => DestinationCreate.safeParse(v)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });
});
