import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDotenv } from "./dotenv.ts";

// Untrusted input: the .env file of a repository being deployed. The parser has no error of its own: arbitrary
// text gives a map of well-formed keys to strings, never a throw and never a key on Object.prototype; and a
// file written the ways the format allows (export prefixes, comments, all three quotings) reads back as the
// map it was written from.
const NUM_RUNS = 1000;
const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
);
/** Pieces of dotenv syntax mixed with arbitrary text, so the fuzzer gets past the line pattern. */
const dotenvish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "KEY",
        "export ",
        "a.b-c",
        "__proto__",
        "constructor",
        "=",
        " ",
        "\t",
        "#",
        "\n",
        "\r\n",
      ),
      fc.constantFrom('"', "'", "\\", '\\"', "\\n", "\uFEFF", "\r", "\u2028", " #"),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 40 },
  )
  .map((pieces) => pieces.join(""));

const key = fc.stringMatching(KEY).filter((k) => k.length <= 20);
/** Text with the characters the syntax cares about (quotes, escapes, `#`, every kind of line break) common. */
const valueText = fc
  .array(
    fc.oneof(
      anyText,
      fc.constantFrom("\n", "\r", "\u2028", "\u2029", "\t", " ", "#", "\\", '"', "'", "\\n", "=", "\uFEFF"),
    ),
    { maxLength: 8 },
  )
  .map((pieces) => pieces.join(""));
/** Any text but a line break: the line pattern's `.` must accept the rest, U+2028 and a lone CR included. */
const lineText = (maxLength = 20) => valueText.map((s) => s.slice(0, maxLength).replace(/\r?\n/g, ""));

type Style = "bare" | "single" | "double";
interface Entry {
  key: string;
  value: string;
  style: Style;
}

/** A value the style can carry, and the line that writes it. */
const entry: fc.Arbitrary<Entry> = fc.oneof(
  // Bare: trimmed, no line break, no quote first, and no ` #` (it starts a comment).
  fc.record({
    key,
    value: lineText().filter((v) => v === v.trim() && !/^["']/.test(v) && !/\s#/.test(v)),
    style: fc.constant<Style>("bare"),
  }),
  // Single quotes: taken literally, across lines; only a `'` cannot be carried (nor CR LF, read as LF).
  fc.record({
    key,
    value: valueText.filter((v) => !v.includes("'") && !v.includes("\r\n")),
    style: fc.constant<Style>("single"),
  }),
  // Double quotes: anything, with \, ", and line breaks escaped.
  fc.record({ key, value: valueText, style: fc.constant<Style>("double") }),
);

function write({ value, style }: Entry, literalNewlines: boolean): string {
  if (style === "bare") return value;
  if (style === "single") return `'${value}'`;
  const escaped = value.replace(/[\\"\r\t\n]/g, (c) =>
    c === "\n" ? (literalNewlines ? "\n" : "\\n") : c === "\r" ? "\\r" : c === "\t" ? "\\t" : `\\${c}`,
  );
  return `"${escaped}"`;
}

const layout = fc.record({
  indent: fc.constantFrom("", " ", "\t "),
  exported: fc.boolean(),
  before: fc.constantFrom("", " ", "\t"),
  after: fc.constantFrom("", " ", "  "),
  comment: fc.option(lineText(), { nil: undefined }),
  literalNewlines: fc.boolean(),
  /** Blank and comment lines before the entry. */
  filler: fc.array(
    fc.oneof(
      fc.constantFrom("", "  ", "#"),
      lineText().map((t) => `# ${t}`),
    ),
    { maxLength: 2 },
  ),
});

describe("parseDotenv (fuzz)", () => {
  it("on arbitrary text returns well-formed keys mapped to strings, never throws, never touches a prototype", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, dotenvish), (text) => {
        const env = parseDotenv(text);
        expect(Object.getPrototypeOf(env)).toBe(Object.prototype);
        for (const [k, v] of Object.entries(env)) {
          expect(k).toMatch(KEY);
          expect(k).not.toBe("__proto__");
          expect(text).toContain(k);
          expect(typeof v).toBe("string");
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("a file written from a map reads back as that map (the last of a repeated key wins)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(entry, layout), { maxLength: 12 }),
        fc.constantFrom("\n", "\r\n"),
        fc.boolean(),
        fc.boolean(),
        (entries, eol, bom, trailingEol) => {
          const lines: string[] = [];
          for (const [e, l] of entries) {
            lines.push(...l.filler);
            // A comment needs a space before its `#`, and a value before it (`KEY= # x` is the value `# x`).
            const comment =
              l.comment === undefined || (e.style === "bare" && e.value === "") ? "" : ` # ${l.comment}`;
            const prefix = `${l.indent}${l.exported ? "export " : ""}${e.key}${l.before}=${l.after}`;
            lines.push(`${prefix}${write(e, l.literalNewlines)}${comment}`);
          }
          const text = (bom ? "\uFEFF" : "") + lines.join(eol) + (trailingEol ? eol : "");
          const expected: Record<string, string> = {};
          for (const [e] of entries) if (e.key !== "__proto__") expected[e.key] = e.value;
          expect(parseDotenv(text)).toEqual(expected);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
