import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kmsAuthorization } from "./kms-request.ts";
import { Refused } from "./refusal.ts";

// A KMS request's target and body are untrusted input: one kms:Decrypt authorization or a 4xx refusal.
describe("KMS request reader (fuzz)", () => {
  it("any target and body: a Decrypt authorization whose context keys all name the encryption context, or a 4xx", () => {
    const body = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .dictionary(fc.string(), fc.oneof(fc.string(), fc.integer()))
        .map((c) => JSON.stringify({ EncryptionContext: c })),
    );
    fc.assert(
      fc.property(fc.constantFrom("TrentService.Decrypt", "TrentService.Encrypt", "x"), body, (target, b) => {
        try {
          const { authorization } = kmsAuthorization(target, b, "k");
          expect(authorization.action).toBe("kms:Decrypt");
          for (const key of Object.keys(authorization.context))
            expect(key.startsWith("kms:EncryptionContext:")).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(Refused);
          expect((err as Refused).status).toBeGreaterThanOrEqual(400);
          expect((err as Refused).status).toBeLessThan(500);
        }
      }),
    );
  });
});
