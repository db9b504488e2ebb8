import { afterEach, describe, expect, it, vi } from "vitest";
import { setEnvironment } from "../config.ts";
import { Logger } from "../log.ts";
import { cleanLine, deploymentOutputLogger, OutputFramer, type OutputRecord } from "./sandbox-output.ts";

/** A control character but the newline that ends a log line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

// What a deployment's code prints reaches the operator's log framed: its deployment named on every line, no
// terminal escapes or control characters, lines cut to a length, and a flood counted instead of written.
const frame = (limits = { lineChars: 100, linesPerSecond: 1000 }, now = () => 0) => {
  const records: OutputRecord[] = [];
  return { framer: new OutputFramer(limits, (r) => records.push(r), now), records };
};

describe("cleanLine: no escape sequence or control character survives", () => {
  it.each([
    ["colour (CSI)", "\x1b[31mred\x1b[0m", "red"],
    ["C1 CSI", "\x9b2Jcleared", "cleared"],
    ["title (OSC, BEL)", "\x1b]0;owned\x07text", "text"],
    ["hyperlink (OSC, ST)", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["device control string", "\x1bPq#0;2;0;0;0\x1b\\after", "after"],
    ["two-byte escape", "\x1bcreset", "reset"],
    ["carriage return over a line", 'ok\r{"level":"info"}', 'ok{"level":"info"}'],
    ["backspace, bell, NUL, DEL", "a\bb\x07c\x00d\x7fe", "abcde"],
    ["bidi override", "abc\u202edcba", "abcdcba"],
    ["a lone ESC at the end", "text\x1b", "text"],
  ])("%s", (_name, input, clean) => {
    expect(cleanLine(input, 1000)).toBe(clean);
  });

  it("tabs and printable Unicode stay", () => {
    expect(cleanLine("a\tb — ü 日本", 1000)).toBe("a\tb — ü 日本");
  });

  it("a line longer than the limit is cut, with a mark", () => {
    expect(cleanLine("x".repeat(50), 10)).toBe(`${"x".repeat(10)}…[cut]`);
  });
});

describe("OutputFramer: lines of a sandbox's streams", () => {
  it("splits chunks into lines, across chunk boundaries and on both streams", () => {
    const { framer, records } = frame();
    framer.write("stdout", "one\ntw");
    framer.write("stderr", "err\n");
    framer.write("stdout", "o\nthree");
    framer.end();
    expect(records).toEqual([
      { stream: "stdout", line: "one" },
      { stream: "stderr", line: "err" },
      { stream: "stdout", line: "two" },
      { stream: "stdout", line: "three" },
    ]);
  });

  it("a line without an end is cut at the limit and its rest skipped to the next newline", () => {
    const { framer, records } = frame({ lineChars: 10, linesPerSecond: 1000 });
    for (let i = 0; i < 100; i++) framer.write("stdout", "y".repeat(1000));
    framer.write("stdout", "tail of it\nnext\n");
    expect(records).toEqual([
      { stream: "stdout", line: `${"y".repeat(10)}…[cut]` },
      { stream: "stdout", line: "next" },
    ]);
  });

  it("a flood past the lines a second is dropped and counted, then lines pass again", () => {
    let t = 0;
    const { framer, records } = frame({ lineChars: 100, linesPerSecond: 5 }, () => t);
    framer.write("stdout", "line\n".repeat(1000));
    framer.write("stderr", "e\n".repeat(10));
    t = 1000;
    framer.write("stdout", "later\n");
    framer.end();
    expect(records.filter((r) => "line" in r)).toHaveLength(6);
    expect(records).toContainEqual({ stream: "stdout", dropped: 995 });
    expect(records).toContainEqual({ stream: "stderr", dropped: 10 });
    expect(records.at(-1)).toEqual({ stream: "stdout", line: "later" });
  });
});

describe("deploymentOutputLogger: the platform's JSON log line", () => {
  afterEach(() => vi.restoreAllMocks());

  it("names the deployment and stream; a forged platform line is only the value of `line`", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((s) => written.push(String(s)) > 0);
    const log = new Logger({ service: "agent-platform" });
    const restore = setEnvironment({ LOG_LEVEL: "info" });
    try {
      new OutputFramer({ lineChars: 200, linesPerSecond: 10 }, deploymentOutputLogger("dep-1", log)).write(
        "stdout",
        '{"level":"error","msg":"platform key leaked","service":"agent-platform"}\n\x1b[2Jhi\n',
      );
    } finally {
      restore();
    }
    const lines = written
      .join("")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const l of lines)
      expect(l).toMatchObject({
        level: "info",
        msg: "deployment output",
        deployment_id: "dep-1",
        stream: "stdout",
      });
    expect(lines[0].line).toBe('{"level":"error","msg":"platform key leaked","service":"agent-platform"}');
    expect(lines[1].line).toBe("hi");
    expect(written.join("")).not.toMatch(CONTROL);
  });
});
