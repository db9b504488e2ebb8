import { describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH, regexProblem, safeRegex, unsafePatternReason } from "./safe-regex.ts";

// The one check for users' regexes (price-map match_pattern, langgraph.json allow_origin_regex): refused shapes
// are named in the caller's words; shapes the price tests (shared/llm/price-patterns.test.ts) cover in depth.
describe("users' regexes", () => {
  it("names the field the caller gives", () => {
    expect(unsafePatternReason("(a+)+$", "the regex")).toMatch(/^the regex may not repeat a group/);
    expect(unsafePatternReason("(a+)+$", "match_pattern")).toMatch(/^match_pattern may not repeat a group/);
    expect(regexProblem("x".repeat(MAX_PATTERN_LENGTH + 1), "the regex")).toBe(
      `the regex is longer than ${MAX_PATTERN_LENGTH} characters`,
    );
  });

  it("an origin regex of the usual kinds is accepted", () => {
    for (const p of [
      "https://.*\\.app\\.example",
      "https://[a-z0-9-]+\\.vercel\\.app",
      "^https?://(localhost|127\\.0\\.0\\.1)(:\\d+)?$",
      "https://(preview-\\d+\\.)?app\\.example",
    ])
      expect(regexProblem(p, "the regex"), p).toBeUndefined();
  });

  it("a regex that does not compile or is unsafe compiles to nothing", () => {
    expect(regexProblem("(", "the regex")).toBe("Invalid regular expression");
    expect(safeRegex("(")).toBeNull();
    expect(safeRegex("^(a|aa)*$")).toBeNull();
    expect(safeRegex("^a+$")?.test("aaa")).toBe(true);
  });
});
