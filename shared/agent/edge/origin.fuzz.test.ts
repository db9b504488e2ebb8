import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deploymentOfHost } from "./origin.ts";

// Untrusted input: any Host header. The contract: never a throw; a deployment only for `<one DNS label>.<origin
// domain>` (a port allowed), and then exactly that label, lower-cased.
describe("deploymentOfHost", () => {
  beforeAll(() => {
    process.env.AGENT_ORIGIN_DOMAIN = "agents.example.com";
  });
  afterAll(() => {
    delete process.env.AGENT_ORIGIN_DOMAIN;
  });

  it("names a deployment only as one label directly under an origin domain", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (host) => {
        const id = deploymentOfHost(host);
        if (id === undefined) return;
        expect(id).toMatch(/^[a-z0-9][a-z0-9-]{0,62}$/);
        const name = host.toLowerCase().replace(/:\d{1,5}$/, "");
        expect([`${id}.localhost`, `${id}.agents.example.com`]).toContain(name);
      }),
      { numRuns: 3000 },
    );
  });

  it("reads back every label it could name, under either domain, with any port", () => {
    const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,62}$/);
    fc.assert(
      fc.property(
        label,
        fc.constantFrom("localhost", "agents.example.com"),
        fc.option(fc.integer({ min: 1, max: 65535 })),
        (id, domain, port) => {
          expect(deploymentOfHost(`${id.toUpperCase()}.${domain}${port ? `:${port}` : ""}`)).toBe(id);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
