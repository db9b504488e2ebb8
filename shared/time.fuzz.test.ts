import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalTime } from "./time.ts";

// Untrusted input: run times as the SDKs send them (ISO strings, epoch milliseconds as numbers or digits) and
// anything else a client puts there. The contract: a canonical UTC string with six fraction digits, or
// undefined; never a throw. Canonical strings sort in time order, which the sort keys rely on.
const NUM_RUNS = 1000;
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MIN_MS = Date.UTC(1970, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The instant of a canonical string in microseconds, exactly. */
const micros = (c: string) => BigInt(Date.parse(`${c.slice(0, 23)}Z`)) * 1000n + BigInt(c.slice(23, 26));

const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.array(fc.constantFrom(..."0123456789-:.,+TZtz "), { maxLength: 40 }).map((cs) => cs.join("")),
);

const pad = (n: number, width = 2) => String(n).padStart(width, "0");
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

interface IsoSample {
  text: string;
  /** The same instant in the form `Date.parse` is specified to read, to the millisecond. */
  reference: string;
  /** Fraction digits four to six: the microseconds the canonical form keeps beyond `Date`'s milliseconds. */
  micros: string;
}

/** ISO 8601 as the parser documents it: `T` or space, up to nine fraction digits after `.` or `,`, any offset. */
const iso: fc.Arbitrary<IsoSample> = fc
  .record({
    y: fc.integer({ min: 1960, max: 9999 }),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 31 }),
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
    frac: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    dot: fc.constantFrom(".", ","),
    sep: fc.constantFrom("T", "t", " "),
    offset: fc.oneof(
      fc.constantFrom("", "Z", "z"),
      fc
        .tuple(
          fc.constantFrom("+", "-"),
          fc.integer({ min: 0, max: 23 }),
          fc.integer({ min: 0, max: 59 }),
          fc.boolean(),
        )
        .map(([sign, oh, om, colon]) => `${sign}${pad(oh)}${colon ? ":" : ""}${pad(om)}`),
    ),
    space: fc.constantFrom("", " ", "\t", "\n "),
  })
  .map(({ y, m, d, h, mi, s, frac, dot, sep, offset, space }) => {
    const day = Math.min(d, daysIn(y, m));
    const date = `${pad(y, 4)}-${pad(m)}-${pad(day)}`;
    const time = `${pad(h)}:${pad(mi)}:${pad(s)}`;
    const digits = (frac ?? "").padEnd(6, "0");
    const off =
      offset === "" || offset.toUpperCase() === "Z" ? "Z" : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
    return {
      text: `${space}${date}${sep}${time}${frac === undefined ? "" : dot + frac}${offset}${space}`,
      reference: `${date}T${time}.${digits.slice(0, 3)}${off}`,
      micros: digits.slice(3, 6),
    };
  });

/** Epoch milliseconds with a fraction, fractions just short of the next millisecond included. */
const fractionalMs = fc
  .tuple(
    fc.integer({ min: 0, max: MAX_MS }),
    fc.oneof(
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      fc.double({ min: 0.999, max: 1, maxExcluded: true, noNaN: true }),
    ),
  )
  .map(([whole, frac]) => whole + frac);

describe("canonicalTime (fuzz)", () => {
  it("on anything returns a canonical time in 1970..9999 that it maps to itself, or undefined; never throws", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anyText,
          fc.double(),
          fractionalMs,
          fractionalMs.map(String),
          fc.anything(),
          iso.map((s) => s.text),
        ),
        (value) => {
          const c = canonicalTime(value);
          if (c === undefined) return;
          expect(c).toMatch(CANONICAL);
          const ms = Date.parse(`${c.slice(0, 23)}Z`);
          expect(ms).toBeGreaterThanOrEqual(MIN_MS);
          expect(ms).toBeLessThanOrEqual(MAX_MS);
          expect(canonicalTime(c)).toBe(c);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it("ISO strings with or without an offset are the instant Date reads, plus their microseconds", () => {
    fc.assert(
      fc.property(iso, ({ text, reference, micros }) => {
        const ms = Date.parse(reference);
        const c = canonicalTime(text);
        if (ms < MIN_MS || ms > MAX_MS) {
          expect(c).toBeUndefined();
          return;
        }
        expect(c).toBe(`${new Date(ms).toISOString().slice(0, 23)}${micros}Z`);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("whole epoch milliseconds, as numbers or as 10 to 16 digits, are the instant new Date(ms) is", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_000_000_000, max: MAX_MS }), fc.boolean(), (ms, asText) => {
        expect(canonicalTime(asText ? String(ms) : ms)).toBe(
          `${new Date(ms).toISOString().slice(0, 23)}000Z`,
        );
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("fractional epoch milliseconds are kept to the nearest microsecond", () => {
    fc.assert(
      fc.property(fractionalMs, fc.boolean(), (ms, asText) => {
        fc.pre(!asText || ms >= 1e9);
        const c = canonicalTime(asText ? String(ms) : ms);
        if (Math.round(ms * 1000) / 1000 > MAX_MS) return;
        expect(c).toMatch(CANONICAL);
        // At most half a microsecond of rounding (the whole milliseconds are subtracted first: exact).
        const whole = Math.floor(ms);
        const kept = Number(micros(c!) - BigInt(whole) * 1000n) / 1000;
        expect(Math.abs(kept - (ms - whole))).toBeLessThanOrEqual(0.0005 + 1e-9);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("canonical strings sort in time order", () => {
    const time = fc.oneof(
      fractionalMs,
      iso.map((s) => s.text),
    );
    fc.assert(
      fc.property(time, time, (a, b) => {
        const [ca, cb] = [canonicalTime(a), canonicalTime(b)];
        fc.pre(ca !== undefined && cb !== undefined);
        const [ia, ib] = [micros(ca!), micros(cb!)];
        expect(ca! < cb! ? -1 : ca! > cb! ? 1 : 0).toBe(ia < ib ? -1 : ia > ib ? 1 : 0);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
