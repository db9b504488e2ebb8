import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DestinationCreate, endpointProblem, isInternalAddress } from "./destinations.ts";

// Untrusted input: endpoint URLs and destination bodies. Arbitrary values give a verdict, never a throw.
describe("destination input fuzz", () => {
  const noDns = async () => {
    throw new Error("ENOTFOUND");
  };
  it("endpointProblem answers every string with ok or a reason", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 200 }), fc.webUrl(), fc.ipV4(), fc.ipV6()),
        async (raw) => {
          const verdict = await endpointProblem(raw, false, noDns);
          expect(verdict === undefined || typeof verdict === "string").toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
  it("no loopback, private or link-local IPv4 URL passes outside local mode", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
          fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
          fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
          fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
          fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
        ),
        fc.constantFrom("http", "https"),
        async (ip, scheme) => {
          const host = ip.join(".");
          expect(isInternalAddress(host)).toBe(true);
          expect(await endpointProblem(`${scheme}://${host}:9000/x`, false, noDns)).toBeDefined();
        },
      ),
      { numRuns: 500 },
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
