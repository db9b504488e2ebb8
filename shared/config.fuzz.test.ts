import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { envNameProblem, MAX_ENV_NAME_LENGTH } from "./config.ts";

// Fuzz: whatever a secret or env name is, the check answers (never throws), and an accepted name is one an
// environment can hold as written, within the cap, and no reserved name in another case.
describe("environment names (fuzz)", () => {
  it("an accepted name matches the allow-list pattern and its upper-case form is accepted too", () => {
    const name = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,140}$/),
      fc
        .tuple(
          fc.constantFrom("LD_", "openssl_", "Node_", "PYTHON", "dyld_", "", "git_"),
          fc.stringMatching(/^\w{0,8}$/),
        )
        .map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(name, (n) => {
        const problem = envNameProblem(n);
        if (problem !== undefined) {
          expect(typeof problem).toBe("string");
          return;
        }
        expect(n).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
        expect(n.length).toBeLessThanOrEqual(MAX_ENV_NAME_LENGTH);
        expect(envNameProblem(n.toUpperCase())).toBeUndefined();
        expect(envNameProblem(n.toLowerCase())).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
  });
});
