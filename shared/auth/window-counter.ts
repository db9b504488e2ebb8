import { logger } from "../log.ts";

// Counting a workspace's requests in fixed windows shared by every process (issue 25). A process's first request
// of a window is added to the shared record at once and decided by the total it answers (a new Lambda environment
// must not admit a whole window on its own); every later one is decided in memory, without waiting for the store:
// admitted while the window's shared total it last learned plus its own requests not yet added there stays below
// the window's limit. It adds its requests to the
// shared record off the request path, a block at a time (or what it has after FLUSH_MS), with one UpdateItem that
// answers the new shared total. So N processes together admit at most the limit plus what each had not yet added
// (a block, plus what it admitted while one UpdateItem was under way). Counts of a window that ended are dropped:
// windows are fixed, nobody decides by a past one, and adding them would cost a write for nothing.

export interface RateWindow {
  /** Requests one window admits. */
  limit: number;
  /** Its length. */
  ms: number;
}

/** Adds `n` requests to a workspace's window in the shared store; answers the window's new total. */
export type AddCount = (tenant: string, windowStart: number, n: number, expiresAt: number) => Promise<number>;

export type Decision = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/** A process's first request of a window waits at most this long for the shared total (then decides in memory). */
export const LEARN_WAIT_MS = 250;
/** A process adds its requests at the latest this long after the first of them. */
export const FLUSH_MS = 200;
/** Windows' records outlive their window by this much before TTL deletes them. */
const RECORD_TTL_SECONDS = 60;
/** Tallies a process keeps before it forgets those of ended windows. */
const MAX_TALLIES = 10_000;

/** Requests a process admits before it adds them to the shared record at once. */
export const blockOf = (limit: number) => Math.max(1, Math.floor(limit / 20));

/** The window `now` (ms) falls in: its start, and the whole seconds until it ends (at least 1). */
export function windowAt(now: number, ms: number): { start: number; retryAfterSeconds: number } {
  const start = Math.floor(now / ms) * ms;
  return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + ms - now) / 1000)) };
}

/** One workspace's current window as this process sees it. */
interface Tally {
  start: number;
  end: number;
  limit: number;
  /** The shared total the last UpdateItem answered, and when. */
  known: number;
  learnedAt: number;
  /** Admitted here, not yet sent. */
  pending: number;
  /** Admitted here, in the UpdateItem under way. */
  sending: number;
  flushing?: Promise<void>;
  /** The last UpdateItem failed: only the interval's flush tries again (a failing store gets no write a block). */
  failed?: boolean;
  /** The window's first request here, added to learn the shared total: others of the window wait for it. */
  learning?: Promise<void>;
  /** That add has not answered within LEARN_WAIT_MS: requests are decided in memory until it does. */
  unanswered?: boolean;
}

export class WindowCounter {
  private readonly tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly add: AddCount,
    private readonly flushMs = FLUSH_MS,
  ) {}

  /**
   * Admits or refuses one request of the workspace. A process that has not heard the window's shared total within
   * the flush interval (its first request there: a new Lambda environment, a new window; or a quiet spell) adds that
   * request to the shared record and waits for the total, so N processes cannot each admit a window on their own;
   * a busy process's requests are decided in memory, its knowledge kept fresh by its own flushes.
   * If the store cannot be reached the request is decided as before, in memory (the limiter never takes the API down).
   */
  async admit(tenant: string, window: RateWindow, now = Date.now()): Promise<Decision> {
    const { start, retryAfterSeconds } = windowAt(now, window.ms);
    const known = this.tallies.get(tenant);
    if (known?.start === start) {
      if (known.learning) await known.learning;
      // What other processes added since it last heard is unknown to it: stale knowledge is learned again (not
      // while the store fails or has not answered: then it decides in memory, as it can).
      const fresh = Date.now() - known.learnedAt <= this.flushMs;
      if (fresh || known.failed || known.unanswered) return this.decide(tenant, window, now);
      // A full window stays full: no need to ask.
      if (known.known + known.pending + known.sending >= window.limit)
        return this.decide(tenant, window, now);
    }
    const t = known?.start === start ? known : this.tally(tenant, window, start, now);
    let answered = false;
    const added = this.send(tenant, t, 1).then((ok) => {
      answered = ok;
      t.unanswered = false;
      // Not added: it is pending now, for the interval's flush.
      if (!ok) this.schedule();
    });
    // A store that does not answer holds a request no longer than this; it is then decided in memory.
    let timer: NodeJS.Timeout | undefined;
    t.learning = Promise.race([added, new Promise<void>((r) => (timer = setTimeout(r, LEARN_WAIT_MS)))]);
    await t.learning;
    clearTimeout(timer);
    t.learning = undefined;
    if (!answered) {
      t.unanswered = !t.failed;
      return { admitted: true };
    }
    // Counted above: the total includes this request.
    return t.known <= t.limit ? { admitted: true } : { admitted: false, retryAfterSeconds };
  }

  private tally(tenant: string, window: RateWindow, start: number, now: number): Tally {
    if (!this.tallies.has(tenant) && this.tallies.size >= MAX_TALLIES) this.forgetEnded(now);
    const t: Tally = {
      start,
      end: start + window.ms,
      limit: window.limit,
      known: 0,
      learnedAt: 0,
      pending: 0,
      sending: 0,
    };
    this.tallies.set(tenant, t);
    return t;
  }

  /** Admits or refuses one request of the workspace now, in memory; the count reaches the store later. */
  decide(tenant: string, window: RateWindow, now = Date.now()): Decision {
    const { start, retryAfterSeconds } = windowAt(now, window.ms);
    let t = this.tallies.get(tenant);
    if (t?.start !== start) t = this.tally(tenant, window, start, now);
    t.limit = window.limit;
    if (t.known + t.pending + t.sending >= t.limit) return { admitted: false, retryAfterSeconds };
    t.pending++;
    if (t.pending >= blockOf(t.limit) && !t.flushing && !t.failed) this.flush(tenant, t);
    else this.schedule();
    return { admitted: true };
  }

  /** Adds what every workspace has pending until nothing is left or an add fails (tests; a process's end). */
  async flushed(): Promise<void> {
    for (;;) {
      const now = Date.now();
      for (const [tenant, t] of this.tallies)
        if (t.pending && !t.flushing && !t.failed && t.end > now) this.flush(tenant, t);
      const underway = [...this.tallies.values()].flatMap((t) => (t.flushing ? [t.flushing] : []));
      if (!underway.length) return;
      await Promise.all(underway);
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushAll(Date.now());
    }, this.flushMs);
    // Nothing to flush must keep a process (or a Lambda invocation) alive.
    this.timer.unref();
  }

  private flushAll(now: number): void {
    for (const [tenant, t] of this.tallies) {
      if (t.end <= now) {
        if (!t.flushing) this.tallies.delete(tenant);
      } else if (t.pending && !t.flushing) this.flush(tenant, t);
    }
  }

  private forgetEnded(now: number): void {
    for (const [tenant, t] of this.tallies) if (t.end <= now && !t.flushing) this.tallies.delete(tenant);
  }

  /**
   * Adds `n` of the tally's requests to the shared record (counted as sending meanwhile) and learns the total it
   * answers; answers whether the store took them. Those it did not take are pending again, for a later flush.
   */
  private async send(tenant: string, t: Tally, n: number): Promise<boolean> {
    t.sending += n;
    const expiresAt = Math.ceil(t.end / 1000) + RECORD_TTL_SECONDS;
    try {
      t.known = Math.max(t.known, await this.add(tenant, t.start, n, expiresAt));
      t.learnedAt = Date.now();
      t.failed = false;
      return true;
    } catch (err) {
      t.failed = true;
      t.pending += n;
      logger.warn("rate limit count not added", { tenant_id: tenant, requests: n, error: err });
      return false;
    } finally {
      t.sending -= n;
    }
  }

  private flush(tenant: string, t: Tally): void {
    const n = t.pending;
    t.pending = 0;
    t.flushing = this.send(tenant, t, n).then(() => {
      t.flushing = undefined;
      if (!t.pending || this.tallies.get(tenant) !== t) return;
      // A full block goes at once after a success; after a failure, not before the next interval.
      if (!t.failed && t.pending >= blockOf(t.limit) && t.end > Date.now()) this.flush(tenant, t);
      else this.schedule();
    });
  }
}
