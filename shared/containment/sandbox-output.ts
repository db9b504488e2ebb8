import { type Logger, logger } from "../log.ts";

// What sandboxed code prints reaches the operator's log and terminal only framed: each line a JSON record naming
// the deployment and stream (so no line reads as the platform's own), without terminal control sequences or
// other control characters, cut to a length, and at most so many lines a second (the rest counted, not kept).

/** Escape sequences (CSI, OSC and string commands, two-byte ESC), 7-bit and C1 forms: removed whole. */
const ESCAPES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)|\x1b[\s\S]?/g;
/**
 * Control characters left after that (C0 but tab, DEL, C1), and the ones that reorder or break a rendered line
 * (bidi overrides and isolates, the Unicode line and paragraph separators).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` without escape sequences and control characters, cut to `maxChars` (with a mark when cut). */
export function cleanLine(text: string, maxChars: number): string {
  const clean = text.replace(ESCAPES, "").replace(CONTROLS, "");
  return clean.length > maxChars ? `${clean.slice(0, maxChars)}…[cut]` : clean;
}

export interface OutputLimits {
  /** Characters of a line kept (more are cut). */
  lineChars: number;
  /** Lines a second a sandbox's streams may write together; more are dropped and counted. */
  linesPerSecond: number;
}

/** A framed line: the deployment's (or build's) output, or the platform's count of lines it dropped. */
export type OutputRecord =
  | { stream: "stdout" | "stderr"; line: string }
  | { stream: "stdout" | "stderr"; dropped: number };

/**
 * Splits a sandbox's output streams into lines and hands each, cleaned, to `emit`, within the rate limit. One
 * per sandbox: its streams share the limit. A line longer than the limit is cut and its rest skipped up to the
 * next newline, so a line without an end holds no more than `lineChars` in memory.
 */
export class OutputFramer {
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private readonly dropped = { stdout: 0, stderr: 0 };
  private readonly partial = { stdout: "", stderr: "" };
  private readonly skipping = { stdout: false, stderr: false };

  constructor(
    private readonly limits: OutputLimits,
    private readonly emit: (record: OutputRecord) => void,
    private readonly now: () => number = Date.now,
  ) {}

  write(stream: "stdout" | "stderr", chunk: Buffer | string): void {
    const parts = (this.partial[stream] + chunk.toString()).split(/\r?\n/);
    let rest = parts.pop() ?? "";
    for (const part of parts) {
      if (this.skipping[stream]) this.skipping[stream] = false;
      else this.line(stream, part);
    }
    if (!this.skipping[stream] && rest.length > this.limits.lineChars) {
      this.line(stream, rest);
      this.skipping[stream] = true;
      rest = "";
    }
    this.partial[stream] = this.skipping[stream] ? "" : rest;
  }

  /** The streams ended: their last unfinished lines, and what was dropped since the last count. */
  end(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      if (this.partial[stream]) this.line(stream, this.partial[stream]);
      this.partial[stream] = "";
    }
    this.reportDropped();
  }

  private line(stream: "stdout" | "stderr", raw: string): void {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.reportDropped();
      this.windowStart = t;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.limits.linesPerSecond) {
      this.dropped[stream]++;
      return;
    }
    this.inWindow++;
    const line = cleanLine(raw, this.limits.lineChars);
    if (line.trim()) this.emit({ stream, line });
  }

  private reportDropped(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      if (!this.dropped[stream]) continue;
      this.emit({ stream, dropped: this.dropped[stream] });
      this.dropped[stream] = 0;
    }
  }
}

/**
 * Writes a deployment's output records as the platform's JSON log lines, its id on each: stdout at info, stderr
 * at warn, a count of dropped lines at warn.
 */
export function deploymentOutputLogger(
  deploymentId: string,
  log: Logger = logger,
): (r: OutputRecord) => void {
  const out = log.child({ deployment_id: deploymentId });
  return (r) => {
    if ("dropped" in r) out.warn("deployment output dropped", { stream: r.stream, dropped: r.dropped });
    else if (r.stream === "stderr") out.warn("deployment output", { stream: r.stream, line: r.line });
    else out.info("deployment output", { stream: r.stream, line: r.line });
  };
}
