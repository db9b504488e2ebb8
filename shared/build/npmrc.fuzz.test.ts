// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} is .npmrc syntax, not a template
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { filterNpmrc } from "./npmrc.ts";

// Untrusted input: a repository's .npmrc. Whatever the text, the filter never throws, and what it hands npm is
// only registry lines with http(s) URLs and token lines that name the environment, one setting per line.
const ALLOWED =
  /^(?:(?:@[a-z0-9~-][a-z0-9._~-]*:)?registry=https?:\/\/\S+\/|\/\/\S+\/:_authToken=\$\{NPM_TOKEN_\d+\})$/i;

const npmrcish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "registry",
        "@s:registry",
        "//registry.npmjs.org/:_authToken",
        "//h.example/p/:_authToken",
        "=",
        "${T}",
        "${",
        "}",
        "https://h.example/p",
        "git",
        "[x]",
        "\n",
        "\r",
        ";",
        " ",
        "\uFEFF",
      ),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 40 },
  )
  .map((p) => p.join(""));

describe("filterNpmrc on arbitrary text", () => {
  it("never throws and keeps only allowed settings", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), npmrcish), fc.oneof(fc.string(), npmrcish), (a, b) => {
        const r = filterNpmrc(
          [
            { name: ".npmrc", text: a },
            { name: "g/.npmrc", text: b },
          ],
          { T: "tok" },
        );
        for (const line of r.text.split("\n").filter(Boolean)) expect(line).toMatch(ALLOWED);
        expect(Object.values(r.env).every((v) => v === "tok")).toBe(true);
        for (const d of r.dropped) expect(d).not.toMatch(/[\n\r]/);
      }),
      { numRuns: 1000 },
    );
  });
});
