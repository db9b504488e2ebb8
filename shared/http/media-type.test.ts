import { describe, expect, it } from "vitest";
import { parseMediaType } from "./media-type.ts";

describe("parseMediaType (RFC 9110 media-type)", () => {
  it("reads one type, its case folded, with any parameters", () => {
    for (const [value, essence] of [
      ["text/plain", "text/plain"],
      ["Text/HTML; Charset=UTF-8", "text/html"],
      ['application/json ; a="x;y\\"" ;b=c', "application/json"],
      [" image/png\t", "image/png"],
      ["text/plain;", "text/plain"],
      ["text/plain;;charset=x", "text/plain"],
    ])
      expect(parseMediaType(value)?.essence, value).toBe(essence);
  });

  it("reads a list, a stray character or non-ASCII as no type", () => {
    for (const value of [
      "text/plain, text/html",
      'text/plain; a="x,text/html"',
      "text/plain;,text/html",
      "html",
      "text/",
      "/plain",
      "text/plain/x",
      "text /plain",
      "text/plain; charset",
      "text/plain; charset=",
      'text/plain; a="unterminated',
      "text/plain\u000b",
      "\u00a0text/plain",
      "text/pl\u00e4in",
      'text/plain; a="\u00ff"',
      'text/plain; a="\t"',
      "text/pl`ain",
      '"text/html"',
      "",
    ])
      expect(parseMediaType(value), JSON.stringify(value)).toBeUndefined();
  });
});
