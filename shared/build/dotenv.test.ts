import { describe, expect, it } from "vitest";
import { parseDotenv } from "./dotenv.ts";

describe("parseDotenv", () => {
  it("reads KEY=VALUE lines, export prefixes, comments and quoted values", () => {
    const text = [
      "# a comment",
      "export A=1 # trailing comment",
      "B = 'single # not a comment'",
      'C="line\\nnext \\"quoted\\" \\\\"',
      "D='spans",
      "lines'",
      "__proto__=x",
    ].join("\r\n");
    expect(parseDotenv(text)).toEqual({
      A: "1",
      B: "single # not a comment",
      C: 'line\nnext "quoted" \\',
      D: "spans\nlines",
    });
  });

  it("keeps a value holding a lone CR or U+2028 (the line pattern once refused the whole line)", () => {
    expect(parseDotenv("A='x\ry'\nB=\"p\u2028q\"\nC=u\u2029v # c\nD=1")).toEqual({
      A: "x\ry",
      B: "p\u2028q",
      C: "u\u2029v",
      D: "1",
    });
  });
});
