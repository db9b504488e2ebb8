import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastestMatchMs } from "../../test/helpers/match-time.ts";
import { LINEAR_FALLBACK, MAX_PATTERN_LENGTH, unsafePatternReason as reason } from "../safe-regex.ts";
import { DEFAULT_PRICE_MAP } from "./default-prices.ts";
import { findPrice, MAX_MODEL_NAME_LENGTH, type PriceEntry } from "./prices.ts";

const unsafePatternReason = (p: string) => reason(p, "match_pattern");

const entry = (match_pattern: string): PriceEntry => ({
  id: match_pattern,
  name: match_pattern,
  match_pattern,
  prompt_cost: 1e-6,
  completion_cost: 2e-6,
});

describe("price-map patterns cannot hang the process", () => {
  it("this Node's V8 falls back to its linear-time engine (the bound on every match relies on it)", () => {
    expect(LINEAR_FALLBACK).toBe(true);
  });

  it("every built-in pattern is accepted", () => {
    for (const e of DEFAULT_PRICE_MAP) expect(unsafePatternReason(e.match_pattern), e.id).toBeUndefined();
  });

  it("ordinary patterns are accepted", () => {
    for (const p of [
      "^acme-1$",
      ".*-.*-.*x",
      "^(openai/)?gpt-4o(-mini)?(-\\d{4}-\\d{2}-\\d{2})?$",
      "claude-[\\w.-]+",
      "^(ab)+$",
      "a{2,5}b*",
      "[(+*]+x",
      "\\(a+\\)+",
      "\\p{L}+\\d+",
    ])
      expect(unsafePatternReason(p), p).toBeUndefined();
  });

  it.each([
    ["(a+)+$", /nested quantifiers/],
    ["^(a*)*b$", /nested quantifiers/],
    ["(\\w+\\s?)*$", /nested quantifiers/],
    ["(.*a){20}", /nested quantifiers/],
    ["((a+)?)+", /nested quantifiers/],
    ["(a|aa)*$", /alternation/],
    ["^(a|a)+$", /alternation/],
    ["(a)\\1", /backreferences/],
    ["(?<x>a)\\k<x>", /backreferences/],
    ["^gpt-4(?!o)", /lookaround/],
    ["(?<=a)b", /lookaround/],
    ["a".repeat(MAX_PATTERN_LENGTH + 1), /longer than/],
  ])("refuses %s, saying why", (pattern, why) => {
    expect(unsafePatternReason(pattern)).toMatch(why);
  });

  it("matching stays fast against a long model name, even for a dangerous pattern stored before the rule", () => {
    const entries = [
      ...DEFAULT_PRICE_MAP,
      entry("(a+)+$"),
      entry("^(a|aa)*$"),
      entry("a*a*a*a*a*!"),
      entry(".*a.*a.*a.*a.*a.*x"),
    ];
    for (const name of [
      "a".repeat(MAX_MODEL_NAME_LENGTH) + "!",
      "a".repeat(100_000) + "!",
      `${"gpt-4o-".repeat(36)}x`,
    ]) {
      expect(findPrice(entries, name, null, null)).toBeNull();
      expect(fastestMatchMs(() => findPrice(entries, name, null, null), 200)).toBeLessThan(200);
    }
    expect(findPrice(entries, "gpt-4o-2024-05-13", null, null)?.id).toBe("default-openai-gpt-4o");
  });

  it("accepted patterns finish quickly on adversarial names (fuzz)", () => {
    const piece = fc.constantFrom(
      "a",
      "a*",
      "a+",
      ".*-",
      "-.*a",
      "a?",
      "(a)",
      "(a)?",
      "(a+)?",
      "(a|b)",
      "[ab]*",
      ".",
      ".*",
      "\\w+",
      "-",
      "{2}",
      "|",
      "^",
      "$",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 12 }),
        fc.constantFrom("a", "ab", "-a"),
        (parts, unit) => {
          const pattern = parts.join("");
          let re: RegExp;
          try {
            re = new RegExp(pattern);
          } catch {
            return;
          }
          if (unsafePatternReason(pattern)) return;
          const name = `${unit.repeat(Math.floor(MAX_MODEL_NAME_LENGTH / unit.length) - 1)}!`;
          expect(
            fastestMatchMs(() => re.test(name), 250),
            pattern,
          ).toBeLessThan(250);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("the check never throws, whatever the pattern", () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (p) => void unsafePatternReason(p)));
  });
});
