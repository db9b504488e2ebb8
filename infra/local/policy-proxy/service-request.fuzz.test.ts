import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import { EMULATED_SERVICES, type ServiceArns, serviceAuthorizations } from "./service-request.ts";

// A call to an emulated service is untrusted input: authorization requests, or a 4xx refusal, never a crash.
const arns: ServiceArns = {
  region: "us-east-1",
  account: "000000000000",
  kmsKey: (id) => (id === "k" ? "arn:aws:kms:us-east-1:000000000000:key/k" : undefined),
  kmsKeyOfCiphertext: (b) => (b.length > 3 ? "arn:aws:kms:us-east-1:000000000000:key/k" : undefined),
};
const json = fc.dictionary(
  fc.constantFrom(
    "KeyId",
    "CiphertextBlob",
    "EncryptionContext",
    "stateMachineArn",
    "executionArn",
    "GroupName",
    "Target",
    "x",
  ),
  fc.oneof(
    fc.string(),
    fc.constant("k"),
    fc.jsonValue(),
    fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())),
  ),
);

describe("emulated services' request reader (fuzz)", () => {
  it("any target, method, URL and body: authorizations or a 4xx", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EMULATED_SERVICES),
        fc.option(
          fc.oneof(
            fc.string(),
            fc.constantFrom(
              "TrentService.Decrypt",
              "TrentService.Encrypt",
              "AWSStepFunctions.StartExecution",
            ),
          ),
          { nil: undefined },
        ),
        fc.constantFrom("GET", "POST", "PUT", "DELETE"),
        fc.oneof(
          fc.string(),
          fc.constantFrom(
            "/schedules/a",
            "/2015-03-31/functions/f/invocations",
            "/schedules/%zz",
            "/2015-03-31/functions/%E0/invocations?Qualifier=1",
          ),
        ),
        fc.option(json, { nil: undefined }),
        (service, target, method, url, input) => {
          try {
            const auths = serviceAuthorizations(service, { target, method, url, input }, arns);
            expect(auths.length).toBeGreaterThan(0);
            for (const a of auths) {
              expect(typeof a.action).toBe("string");
              expect(typeof a.resource).toBe("string");
            }
          } catch (err) {
            expect(err).toBeInstanceOf(Refused);
            expect((err as Refused).status).toBeGreaterThanOrEqual(400);
            expect((err as Refused).status).toBeLessThan(500);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
