import { config } from "../config.ts";
import { cleanLine } from "../containment/sandbox-output.ts";
import { isoNow } from "../time.ts";

// A step's log as one object rewritten whole: lines kept in memory, written at most every `flushMs` and on
// close. The platform writes revision logs this way to S3 (RevisionLog), the build step to a presigned URL.
// A repository's tools write into it (npm, git, the graphs' bundling): each line is stored without terminal
// escapes and control characters, cut to a length, and past MAX_LINES only counted.

/** Lines a log keeps; more are counted in its last line. */
export const MAX_LINES = 20_000;

/** How logs are stored and served. */
export const LOG_TYPE = "text/plain; charset=utf-8";

export class BufferedLog {
  private lines: string[];
  private timer?: NodeJS.Timeout;
  private writing = Promise.resolve();
  /** How many lines the last write held. */
  private written: number;
  /** Lines not kept, past MAX_LINES, and how many of them the last write counted. */
  private dropped = 0;
  private writtenDropped = 0;

  /** `earlier`: what the object holds already (its lines are kept, and not written again until a new one). */
  constructor(
    private readonly write: (body: string) => Promise<unknown>,
    private readonly flushMs = 1000,
    earlier = "",
  ) {
    this.lines = earlier.split("\n").filter((l) => l.trim());
    this.written = this.lines.length;
  }

  readonly line = (text: string): void => {
    for (const raw of text.split(/\r?\n/)) {
      const l = cleanLine(raw, config.sandbox.outputLineChars);
      if (!l.trim()) continue;
      if (this.lines.length < MAX_LINES) this.lines.push(`${isoNow()} ${l}`);
      else this.dropped++;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
  };

  /**
   * Writes the lines so far. Nothing is written again when no line came since the last write: a reader that
   * saw the revision's final status must not catch the object in the middle of a needless rewrite.
   */
  flush(): Promise<void> {
    if (this.lines.length === this.written && this.dropped === this.writtenDropped) return this.writing;
    this.written = this.lines.length;
    this.writtenDropped = this.dropped;
    const more = this.dropped
      ? `${isoNow()} (${this.dropped} more lines not kept: a log keeps ${MAX_LINES})\n`
      : "";
    const body = `${this.lines.join("\n")}\n${more}`;
    this.writing = this.writing
      .then(() => this.write(body))
      .then(
        () => undefined,
        () => undefined,
      );
    return this.writing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
