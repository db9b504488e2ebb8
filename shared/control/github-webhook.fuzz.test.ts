import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HttpError } from "../errors.ts";
import {
  deliveryOf,
  payloadOf,
  pushMatches,
  pushOf,
  repositoryIdentity,
  signatureMatches,
  signatureOf,
} from "./github-webhook.ts";

// A webhook delivery is untrusted input: any headers, body and payload give an answer or a 4xx, never a crash.
const only4xx = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBeGreaterThanOrEqual(400);
    expect((err as HttpError).status).toBeLessThan(500);
  }
};

const repository = fc.record(
  {
    clone_url: fc.oneof(fc.webUrl(), fc.string(), fc.anything()),
    html_url: fc.oneof(fc.webUrl(), fc.anything()),
    ssh_url: fc.oneof(fc.string(), fc.constant("git@github.com:a/b.git")),
    default_branch: fc.oneof(fc.string(), fc.anything()),
  },
  { requiredKeys: [] },
);
const pushPayload = fc.record(
  {
    ref: fc.oneof(fc.constant("refs/heads/main"), fc.string(), fc.anything()),
    after: fc.oneof(fc.stringMatching(/^[0-9a-f]{40}$/), fc.string(), fc.anything()),
    deleted: fc.anything(),
    repository: fc.oneof(repository, fc.anything()),
  },
  { requiredKeys: [] },
);

describe("webhook delivery parsing (fuzz)", () => {
  it("any signature header is a yes or no; only the right one is yes", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.uint8Array({ maxLength: 300 }),
        fc.option(fc.string()),
        (secret, bytes, header) => {
          const raw = Buffer.from(bytes);
          const right = signatureOf(secret, raw);
          expect(signatureMatches(secret, raw, header ?? undefined)).toBe(
            header?.trim().toLowerCase() === right,
          );
          expect(signatureMatches(secret, raw, right)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("any headers give a delivery or a 400", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom("x-github-event", "x-github-delivery", "other"),
          fc.option(fc.string()),
        ),
        (headers) => only4xx(() => deliveryOf(headers as Record<string, string | undefined>)),
      ),
      { numRuns: 2000 },
    );
  });

  it("any body gives a payload object or a 400, and any payload a push or a 400", () => {
    const body = fc.oneof(
      fc.string({ maxLength: 500 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      pushPayload.map((p) => Buffer.from(JSON.stringify(p) ?? "")),
    );
    const contentType = fc.constantFrom(
      undefined,
      "application/json",
      "application/x-www-form-urlencoded",
      "x",
    );
    fc.assert(
      fc.property(body, contentType, (raw, type) =>
        only4xx(() => {
          const payload = payloadOf(raw, type);
          const p = pushOf(payload);
          expect(p.after).toMatch(/^[0-9a-f]{40}$/);
          for (const u of p.repository.urls) expect(typeof u).toBe("string");
          pushMatches(p, { repo_url: "https://github.com/a/b", repo_ref: null });
        }),
      ),
      { numRuns: 3000 },
    );
  });

  it("any address has an identity or none, never a throw", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl()), (a) => {
        const id = repositoryIdentity(a);
        expect(id === undefined || typeof id === "string").toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
