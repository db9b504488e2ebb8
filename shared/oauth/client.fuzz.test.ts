import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TokenEndpointError } from "../errors.ts";
import { parseTokenResponse } from "./client.ts";

// A token endpoint's answer is whatever the configured server sends: a grant or an error, never a throw.
const contentType = fc.option(
  fc.constantFrom(
    "application/json",
    "application/x-www-form-urlencoded",
    "text/html",
    "application/json; charset=utf-8",
  ),
  { nil: undefined },
);
const body = fc.oneof(
  fc.string({ maxLength: 2000 }),
  fc.json(),
  fc
    .record(
      {
        access_token: fc.anything(),
        refresh_token: fc.anything(),
        expires_in: fc.anything(),
        scope: fc.anything(),
        error: fc.anything(),
      },
      { requiredKeys: [] },
    )
    .map((o) => {
      try {
        return JSON.stringify(o);
      } catch {
        return "{}";
      }
    }),
);

describe("parseTokenResponse (fuzz)", () => {
  it("answers a well-formed grant or a bounded error for any status, type and body", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999 }), contentType, body, (status, type, raw) => {
        const out = parseTokenResponse(status, type, raw ?? "");
        if (out instanceof TokenEndpointError) {
          expect(out.message.length).toBeLessThanOrEqual(300);
          expect(out.message).toMatch(/^[\x20-\x7e]*$/);
          return;
        }
        expect(status >= 200 && status <= 299).toBe(true);
        expect(typeof out.access_token).toBe("string");
        expect(out.access_token.length).toBeGreaterThan(0);
        if (out.expires_in !== undefined)
          expect(Number.isInteger(out.expires_in) && out.expires_in > 0).toBe(true);
        for (const s of out.scopes ?? []) expect(s.length).toBeGreaterThan(0);
      }),
      { numRuns: 3000 },
    );
  });
});
