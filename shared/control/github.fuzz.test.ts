import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRepositoriesPage } from "./github.ts";

// A git host's answer is untrusted: any body gives a listing of well-formed repositories or undefined.
const repo = fc.record(
  {
    id: fc.oneof(fc.integer(), fc.double(), fc.string()),
    name: fc.oneof(fc.string(), fc.constant(null)),
    owner: fc.oneof(fc.record({ login: fc.anything() }), fc.anything()),
    html_url: fc.anything(),
    clone_url: fc.string(),
    default_branch: fc.anything(),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.string({ maxLength: 500 }),
  fc.json(),
  fc
    .record({
      total_count: fc.anything(),
      repositories: fc.array(fc.oneof(repo, fc.anything()), { maxLength: 20 }),
    })
    .map((o) => {
      try {
        return JSON.stringify(o);
      } catch {
        return "{}";
      }
    }),
);

describe("parseRepositoriesPage (fuzz)", () => {
  it("never throws and only lists well-formed repositories", () => {
    fc.assert(
      fc.property(body, (raw) => {
        const page = parseRepositoriesPage(raw ?? "");
        if (!page) return;
        expect(Number.isFinite(page.total)).toBe(true);
        for (const r of page.repositories) {
          expect(Number.isSafeInteger(r.id)).toBe(true);
          for (const s of [r.name, r.owner, r.url, r.default_branch])
            expect(typeof s === "string" && s.length > 0).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
