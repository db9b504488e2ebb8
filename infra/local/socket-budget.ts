// The bytes of request bodies one runtime's platform socket may hold at once (issue 33). Each request reserves
// what it may buffer before its body is read; one that does not fit waits in a bounded queue (its body unread,
// so the runtime's writes stall on the socket, not in the platform's memory); beyond the queue it is refused.
// A runtime's requests are served in order of arrival, so one large request is not starved by small ones.

export class SocketBudget {
  private used = 0;
  private readonly waiting: { bytes: number; go: () => void }[] = [];

  constructor(
    private readonly capacity: number,
    private readonly queue: number,
  ) {}

  /** Bytes reserved now (for tests and diagnostics). */
  get reserved(): number {
    return this.used;
  }

  /**
   * Reserves `bytes` (at most the capacity): resolves with the release once they fit, or undefined at once when
   * the queue is full. Call the release exactly once, when the request is done.
   */
  reserve(bytes: number): Promise<(() => void) | undefined> {
    const want = Math.min(Math.max(0, bytes), this.capacity);
    if (!this.waiting.length && this.used + want <= this.capacity) return Promise.resolve(this.take(want));
    if (this.waiting.length >= this.queue) return Promise.resolve(undefined);
    return new Promise((done) => this.waiting.push({ bytes: want, go: () => done(this.take(want)) }));
  }

  private take(bytes: number): () => void {
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      this.next();
    };
  }

  private next(): void {
    while (this.waiting.length && this.used + this.waiting[0].bytes <= this.capacity)
      this.waiting.shift()!.go();
  }
}
