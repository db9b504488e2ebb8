import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import {
  parseAuthorization,
  presignatureMatches,
  presignedCredential,
  presignedTime,
  queryOf,
  requestTime,
  signatureMatches,
  withoutPresignParams,
} from "./sigv4.ts";

// The signature headers are untrusted input: parsed, or refused with a 4xx; a forged signature never matches.
const only4xx = (f: () => unknown) => {
  try {
    return f();
  } catch (err) {
    expect(err).toBeInstanceOf(Refused);
    expect((err as Refused).status).toBeLessThan(500);
  }
};
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const authorization = fc.oneof(
  fc.string(),
  fc
    .tuple(
      fc.string(),
      fc.stringMatching(/^[a-z0-9-]{1,12}$/),
      fc.array(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { maxLength: 4 }),
      hex64,
    )
    .map(
      ([id, svc, hs, sig]) =>
        `AWS4-HMAC-SHA256 Credential=${id}/20260101/us-east-1/${svc}/aws4_request, SignedHeaders=${hs.join(";")}, Signature=${sig}`,
    ),
);

/** Presigned query strings: random ones, and well-formed ones with random values. */
const presignQuery = fc.oneof(
  fc.string(),
  fc
    .record({
      cred: fc.oneof(fc.string(), fc.constant("AKIA0/20260101/us-east-1/s3/aws4_request")),
      date: fc.oneof(fc.string(), fc.constant("20260101T000000Z")),
      expires: fc.oneof(fc.string(), fc.integer().map(String), fc.constant("60")),
      headers: fc.oneof(fc.string(), fc.constant("host")),
      sig: fc.oneof(fc.string(), hex64),
      extra: fc.string(),
    })
    .map(
      (p) =>
        `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${encodeURIComponent(p.cred)}&X-Amz-Date=${p.date}` +
        `&X-Amz-Expires=${p.expires}&X-Amz-SignedHeaders=${p.headers}&X-Amz-Signature=${p.sig}&${p.extra}`,
    ),
);

describe("presigned URLs (fuzz)", () => {
  it("any query string: a credential, none, or a 4xx; a forged signature never matches", async () => {
    await fc.assert(
      fc.asyncProperty(presignQuery, async (q) => {
        const url = `/b/k?${q}`;
        const cred = only4xx(() => presignedCredential(url)) as ReturnType<typeof presignedCredential>;
        only4xx(() => withoutPresignParams(url));
        if (!cred) return;
        const at = only4xx(() => presignedTime(cred, Date.UTC(2026, 0, 1))) as Date | undefined;
        if (!at) return;
        expect(await presignatureMatches({ method: "GET", url, headers: { host: "h" } }, cred, "s", at)).toBe(
          false,
        );
      }),
      { numRuns: 1000 },
    );
  });
});

describe("SigV4 headers (fuzz)", () => {
  it("any Authorization header, X-Amz-Date and query string: parsed or refused", () => {
    fc.assert(
      fc.property(fc.option(authorization, { nil: undefined }), fc.string(), fc.string(), (a, d, q) => {
        only4xx(() => parseAuthorization(a));
        only4xx(() => requestTime(d));
        only4xx(() => queryOf(`/?${q}`));
      }),
      { numRuns: 2000 },
    );
  });

  it("a signature made up by the caller does not match", async () => {
    await fc.assert(
      fc.asyncProperty(hex64, fc.string(), async (sig, body) => {
        const date = "20260101T000000Z";
        const cred = parseAuthorization(
          `AWS4-HMAC-SHA256 Credential=AKIAX/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${sig}`,
        );
        const req = { method: "POST", url: "/", headers: { host: "h", "x-amz-date": date } };
        expect(await signatureMatches(req, cred, "secret", new Date(Date.UTC(2026, 0, 1)), body)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
