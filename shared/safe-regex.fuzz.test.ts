import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastestMatchMs } from "../test/helpers/match-time.ts";
import { MAX_ORIGIN_LENGTH } from "./http/cors.ts";
import { regexProblem, safeRegex } from "./safe-regex.ts";

// Fuzz: the checker never throws, and whatever it accepts matches an origin-sized hostile input at once.
describe("users' regexes (fuzz)", () => {
  it("the check never throws, whatever the pattern", () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (p) => void regexProblem(p, "the regex")));
  });

  it("an accepted origin regex answers a hostile Origin of the capped length quickly", () => {
    const piece = fc.constantFrom(
      "a",
      "a*",
      "a+",
      "a?",
      ".*",
      ".+",
      "\\.",
      "(a)",
      "(a+)?",
      "(a|b)",
      "[a-z]+",
      "\\w*",
      "-",
      "{2,}",
      "|",
      "(",
      ")",
      "https://",
      ":",
      "\\d+",
      "(?:a*)",
      "$",
      "^",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 14 }),
        fc.constantFrom("a", "a.", "a-", "https://a"),
        (parts, unit) => {
          const re = safeRegex(`^(?:${parts.join("")})$`);
          if (!re) return;
          const origin = `${unit.repeat(Math.floor(MAX_ORIGIN_LENGTH / unit.length) - 1)}!`;
          expect(
            fastestMatchMs(() => re.test(origin), 250),
            re.source,
          ).toBeLessThan(250);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
