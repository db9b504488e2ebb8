import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMediaType } from "./media-type.ts";

// Untrusted input: any Content-Type a deployment answers with. The contract: never a throw; a type read here is
// the type a browser reads (the Fetch standard's "extract a MIME type", as Node's fetch implements it); values
// built from the grammar are read, with their type and subtype.
const TCHAR = "!#$%&'*+-.^_|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
const token = fc.string({ unit: fc.constantFrom(...TCHAR), minLength: 1, maxLength: 12 });
const ows = fc.constantFrom("", " ", "\t", "  ");
const quoted = fc
  .string({ unit: fc.constantFrom(...'abc ;=/\\"()'.split("")), maxLength: 10 })
  .map((s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
const parameter = fc
  .tuple(ows, ows, fc.option(fc.tuple(token, fc.oneof(token, quoted))))
  .map(([a, b, p]) => `${a};${b}${p ? `${p[0]}=${p[1]}` : ""}`);
const grammatical = fc
  .tuple(token, token, fc.array(parameter, { maxLength: 4 }))
  .map(([type, subtype, params]) => ({ type, subtype, value: `${type}/${subtype}${params.join("")}` }));
/** Values near the grammar: grammatical ones cut, spliced and joined into lists. */
const nearly = fc.oneof(
  grammatical.map((g) => g.value),
  fc.tuple(grammatical, grammatical).map(([a, b]) => `${a.value}, ${b.value}`),
  fc
    .tuple(grammatical, fc.nat(40), fc.string({ maxLength: 3 }))
    .map(([g, at, s]) => g.value.slice(0, at) + s + g.value.slice(at)),
  fc.string({ unit: fc.constantFrom(...'text/htmlpain;,= "\t\\\u000b\u00a0'.split("")), maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 40 }),
);

/** The type a browser reads from the header (the empty string for none). */
async function browserEssence(value: string): Promise<string | undefined> {
  let res: Response;
  try {
    res = new Response("", { headers: { "content-type": value } });
  } catch {
    return undefined; // not a header value at all (a control character): no HTTP message carries it
  }
  return (await res.blob()).type.split(";")[0];
}

describe("parseMediaType", () => {
  it("reads every value built from the grammar as its type and subtype", () => {
    fc.assert(
      fc.property(grammatical, (g) => {
        expect(parseMediaType(g.value)?.essence).toBe(`${g.type}/${g.subtype}`.toLowerCase());
      }),
      { numRuns: 2000 },
    );
  });

  it("reads no type a browser would read differently", async () => {
    await fc.assert(
      fc.asyncProperty(nearly, async (value) => {
        const ours = parseMediaType(value);
        if (!ours) return;
        const theirs = await browserEssence(value);
        if (theirs !== undefined) expect(theirs).toBe(ours.essence);
      }),
      { numRuns: 3000 },
    );
  });
});
