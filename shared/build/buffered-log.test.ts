import { describe, expect, it } from "vitest";
import { BufferedLog, MAX_LINES } from "./buffered-log.ts";

/** A control character but the newline that ends a log line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

// A deploy log holds what a repository's tools print: the user reads it in a terminal, so it is stored without
// escape sequences or control characters, and a flood is counted instead of kept.
const written = async (lines: string[]) => {
  const bodies: string[] = [];
  const log = new BufferedLog(async (b) => void bodies.push(b), 10_000);
  for (const l of lines) log.line(l);
  await log.close();
  return bodies.at(-1) ?? "";
};

describe("a deploy log's lines", () => {
  it("are stored without terminal escapes or control characters", async () => {
    const body = await written(["\x1b]0;owned\x07npm \x1b[31mERR!\x1b[0m", "ok\rBuild succeeded\x9b2J"]);
    expect(body).not.toMatch(CONTROL);
    expect(body).toMatch(/Z npm ERR!\n/);
    expect(body).toMatch(/Z okBuild succeeded\n/);
  });

  it(`past ${MAX_LINES} lines are counted, not kept`, async () => {
    const body = await written(Array.from({ length: MAX_LINES + 500 }, (_, i) => `line ${i}`));
    const lines = body.trim().split("\n");
    expect(lines).toHaveLength(MAX_LINES + 1);
    expect(lines.at(-1)).toMatch(/\(500 more lines not kept: a log keeps 20000\)$/);
  });
});
