import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { presignedMatches } from "./s3-presigned.ts";

// Untrusted input: any request that reaches the local S3 with a query. Whatever it holds, the check answers
// false (never throws) unless the signature is the real one.
const part = fc.oneof(
  fc.constantFrom(
    "X-Amz-Signature=",
    "X-Amz-Credential=S3RVER%2F20260101%2Fus-east-1%2Fs3%2Faws4_request",
    "X-Amz-Date=20260101T000000Z",
    "X-Amz-Expires=3600",
    "X-Amz-SignedHeaders=host",
    "%",
    "%zz",
    "=",
    "&",
    "a".repeat(64),
  ),
  fc.string({ maxLength: 10 }),
);
const url = fc
  .tuple(fc.string({ maxLength: 20 }), fc.array(part, { maxLength: 12 }))
  .map(([p, q]) => `/${p}?${q.join("&")}`);

describe("presignedMatches on arbitrary requests", () => {
  it("never throws and never matches a made-up signature", async () => {
    await fc.assert(
      fc.asyncProperty(
        url,
        fc.constantFrom("GET", "PUT", "DELETE"),
        fc.option(fc.string()),
        async (u, method, host) => {
          const headers = host === null ? {} : { host };
          expect(await presignedMatches({ method, url: u, headers }, "S3RVER")).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});
