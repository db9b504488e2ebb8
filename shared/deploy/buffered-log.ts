import { isoNow } from "../time.ts";

// A step's log as one object rewritten whole: lines kept in memory, written at most every `flushMs` and on
// close. The platform writes revision logs this way to S3 (RevisionLog), the build step to a presigned URL.

/** How logs are stored and served. */
export const LOG_TYPE = "text/plain; charset=utf-8";

export class BufferedLog {
  private lines: string[];
  private timer?: NodeJS.Timeout;
  private writing = Promise.resolve();
  /** How many lines the last write held. */
  private written: number;

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
    for (const l of text.split(/\r?\n/)) if (l.trim()) this.lines.push(`${isoNow()} ${l}`);
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
    if (this.lines.length === this.written) return this.writing;
    this.written = this.lines.length;
    const body = `${this.lines.join("\n")}\n`;
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
