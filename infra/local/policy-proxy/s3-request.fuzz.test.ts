import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import { s3Authorizations, s3DeleteObjects } from "./s3-request.ts";

// An S3 request line and a DeleteObjects body are untrusted input: authorization requests or a 4xx refusal.
const only4xx = (f: () => unknown) => {
  try {
    return f();
  } catch (err) {
    expect(err).toBeInstanceOf(Refused);
    expect((err as Refused).status).toBeGreaterThanOrEqual(400);
    expect((err as Refused).status).toBeLessThan(500);
  }
};
const segment = fc.oneof(fc.string(), fc.constantFrom("..", ".", "%2e%2e", "%", "%zz", "checkpoints", "b"));
const url = fc.oneof(
  fc.string(),
  fc
    .tuple(
      fc.array(segment, { maxLength: 5 }),
      fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 3 }),
    )
    .map(
      ([segs, q]) => `/${segs.join("/")}${q.length ? `?${q.map(([k, v]) => `${k}=${v}`).join("&")}` : ""}`,
    ),
);

describe("S3 request reader (fuzz)", () => {
  it("any method, path, query and copy source: authorization requests or a refusal; no key with a dot segment", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("GET", "PUT", "POST", "DELETE", "HEAD", "PATCH"),
        url,
        fc.option(fc.oneof(fc.string(), fc.array(fc.string())), { nil: undefined }),
        (m, u, c) => {
          const call = only4xx(() => s3Authorizations(m, u, c)) as
            | ReturnType<typeof s3Authorizations>
            | undefined;
          for (const a of call?.authorizations ?? []) {
            const key = a.resource.split(":::")[1]?.split("/").slice(1) ?? [];
            expect(key.includes("..")).toBe(false);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("any DeleteObjects body: its keys or a refusal", () => {
    const part = fc.constantFrom(
      "<Delete>",
      "</Delete>",
      "<Object>",
      "</Object>",
      "<Key>",
      "</Key>",
      "&amp;",
      "&#x41;",
      "&#99999999;",
      "<![CDATA[",
      "]]>",
      " ",
      "a/b",
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(part, { maxLength: 20 }).map((p) => p.join("")),
        ),
        (body) => {
          only4xx(() => s3DeleteObjects(body));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
