import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ParsedHeader, parseHeaderParams, quoteParam, singleParam } from "./header-params.ts";

// Untrusted input: the Content-Type and Content-Disposition headers of a multipart body. The parser answers a
// parsed header or a string saying why it is malformed, never a throw; its spans cut a parameter out cleanly
// (the multipart reader drops `length` that way); and parameters written as RFC 9110 writes them read back.
const NUM_RUNS = 1000;

const anyText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
);
/** Header syntax mixed with arbitrary text, so the fuzzer reaches quoted values and their escapes. */
const headerish = fc
  .array(
    fc.oneof(
      fc.constantFrom(";", "=", '"', "\\", " ", "\t", "name", "boundary", "length", "x", '\\"', ";;", '="'),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 30 },
  )
  .map((pieces) => pieces.join(""));

/** What a parse gives, spans left out. */
const view = (p: ParsedHeader) => ({
  value: p.value,
  params: p.params.map(({ name, value }) => ({ name, value })),
});

const ows = fc.constantFrom("", " ", "\t", "  ");
/** RFC 9110 token characters. */
const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const param = fc.record({
  name: token,
  value: fc.oneof(
    fc.record({ text: token, quoted: fc.constant(false) }),
    fc.record({ text: anyText, quoted: fc.constant(true) }),
  ),
  space: fc.tuple(ows, ows, ows, ows),
});

describe("parseHeaderParams (fuzz)", () => {
  it("on arbitrary text returns a parse or a reason, never throws; spans start at their `;` and do not overlap", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, headerish), (text) => {
        const parsed = parseHeaderParams(text);
        if (typeof parsed === "string") {
          expect(parsed.length).toBeGreaterThan(0);
          return;
        }
        expect(parsed.value).toBe(text.split(";")[0]!.trim());
        let last = 0;
        for (const p of parsed.params) {
          expect(p.name).not.toBe("");
          expect(p.name).toBe(p.name.toLowerCase());
          expect(text[p.start]).toBe(";");
          expect(p.start).toBeGreaterThanOrEqual(last);
          expect(p.end).toBeGreaterThan(p.start);
          expect(p.end).toBeLessThanOrEqual(text.length);
          last = p.end;
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("cutting any parameter out by its span leaves a header that parses to the rest", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, headerish), fc.nat(), (text, pick) => {
        const parsed = parseHeaderParams(text);
        fc.pre(typeof parsed !== "string" && parsed.params.length > 0);
        const whole = parsed as ParsedHeader;
        const i = pick % whole.params.length;
        const cut = parseHeaderParams(
          text.slice(0, whole.params[i]!.start) + text.slice(whole.params[i]!.end),
        );
        expect(typeof cut).not.toBe("string");
        const expected = view(whole);
        expected.params.splice(i, 1);
        expect(view(cut as ParsedHeader)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("parameters written as tokens or quoted strings (quoteParam), with optional whitespace, read back", () => {
    fc.assert(
      fc.property(
        anyText.filter((v) => !v.includes(";")),
        fc.array(param, { maxLength: 6 }),
        (value, params) => {
          const text =
            value +
            params
              .map(({ name, value: v, space: [a, b, c, d] }) => {
                const written = v.quoted ? quoteParam(v.text) : v.text;
                return `${a};${b}${name}${c}=${d}${written}${v.quoted ? a : ""}`;
              })
              .join("");
          const parsed = parseHeaderParams(text);
          expect(parsed).not.toBeTypeOf("string");
          const got = parsed as ParsedHeader;
          expect(view(got)).toEqual({
            value: value.trim(),
            params: params.map((p) => ({ name: p.name.toLowerCase(), value: p.value.text })),
          });
          // Each span holds exactly its parameter.
          for (const [k, p] of got.params.entries())
            expect(view(parseHeaderParams(`x${text.slice(p.start, p.end)}`) as ParsedHeader).params).toEqual([
              { name: params[k]!.name.toLowerCase(), value: params[k]!.value.text },
            ]);
          // singleParam finds a name given once and refuses one given twice.
          for (const p of params) {
            const count = params.filter((q) => q.name.toLowerCase() === p.name.toLowerCase()).length;
            const one = singleParam(got, p.name.toLowerCase());
            if (count === 1) expect(one).toEqual({ value: p.value.text });
            else expect(one).toBe(`parameter "${p.name.toLowerCase()}" is given ${count} times`);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
