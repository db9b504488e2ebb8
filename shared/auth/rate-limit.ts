import { config } from "../config.ts";
import { TooManyRequests } from "../errors.ts";
import { logger } from "../log.ts";
import { countRequest, tenants } from "../records/identity.ts";

// Requests per workspace (issue 25). Every request authenticated as a workspace — the platform's API handlers
// (shared/http/middlewares.ts) and agent-server requests (shared/agent/router-access.ts), locally and in AWS — is
// counted in a fixed window that every process and Lambda container shares: a record of the main table per
// workspace and window, one conditional UpdateItem per request, expired by TTL. A full window answers 429 with
// Retry-After, the whole seconds until the next window.

export interface RateLimit {
  /** Requests per second on average; 0 (or less): no limit. */
  perSecond: number;
  /** Requests at once: what one window holds. */
  burst: number;
}

export interface RateWindow {
  /** Requests one window admits. */
  limit: number;
  /** Its length. */
  ms: number;
}

/** A burst defaults to this many seconds' worth of requests. */
export const BURST_SECONDS = 5;
/** No window is longer (a tiny rate with a large burst would otherwise lock a workspace out for days). */
const MAX_WINDOW_MS = 3_600_000;
/** Windows' records outlive their window by this much before TTL deletes them. */
const RECORD_TTL_SECONDS = 60;

/** The window a limit counts in: `burst` requests (at least one) per burst/perSecond seconds; none when off. */
export function rateWindow(l: RateLimit): RateWindow | undefined {
  if (!(l.perSecond > 0)) return undefined;
  const limit = Math.max(1, Math.floor(Number.isFinite(l.burst) ? l.burst : 0));
  const ms = Math.min(MAX_WINDOW_MS, Math.max(1, Math.round((limit / l.perSecond) * 1000)));
  return { limit, ms };
}

/** The window `now` (ms) falls in: its start, and the whole seconds until it ends (at least 1). */
export function windowAt(now: number, ms: number): { start: number; retryAfterSeconds: number } {
  const start = Math.floor(now / ms) * ms;
  return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + ms - now) / 1000)) };
}

/** The setting's limit, or the workspace record's own (`rate_limit`, `rate_burst`) when the operator set one. */
export function limitFor(own: { rate_limit?: number; rate_burst?: number } | undefined): RateLimit {
  const setting = config.workspaceRate;
  const perSecond = own?.rate_limit ?? setting.perSecond;
  const burst = own?.rate_burst ?? (own?.rate_limit === undefined ? setting.burst : undefined);
  return { perSecond, burst: burst ?? perSecond * BURST_SECONDS };
}

/** Per workspace: its window (until `until`), and the start of a window this process found full. */
interface Cached {
  window: RateWindow | undefined;
  until: number;
  full?: number;
}
const cache = new Map<string, Cached>();
/** Workspaces whose limit a process remembers (beyond it, it forgets them all and reads again). */
const CACHE_SIZE = 10_000;

/** A workspace's window, read from its record at most once per AUTH_CACHE_MS (as API keys are). */
async function cached(tenant: string): Promise<Cached> {
  const now = Date.now();
  const hit = cache.get(tenant);
  if (hit && hit.until > now) return hit;
  if (cache.size >= CACHE_SIZE) cache.clear();
  const entry: Cached = {
    window: rateWindow(limitFor(await tenants.get(tenant, false))),
    until: now + config.authCacheMs,
  };
  cache.set(tenant, entry);
  return entry;
}

/** A request's count under way: rejects with TooManyRequests when the window was full. */
export interface Count {
  counted: Promise<void>;
}

/**
 * Starts counting a request of the workspace: TooManyRequests at once when this process already found its window
 * full, else the count (one UpdateItem), which a caller may await beside other work. WORKSPACE_RATE_LIMIT=0 turns
 * the limiter off (workspaces' own limits too). A failure of the store is logged and the request let through:
 * the limiter must never be what takes the API down.
 */
export async function startCount(tenant: string): Promise<Count> {
  const admitted = { counted: Promise.resolve() };
  if (!(config.workspaceRate.perSecond > 0)) return admitted;
  let entry: Cached;
  try {
    entry = await cached(tenant);
  } catch (err) {
    logger.warn("rate limit not checked", { tenant_id: tenant, error: err });
    return admitted;
  }
  const window = entry.window;
  if (!window) return admitted;
  const { start, retryAfterSeconds } = windowAt(Date.now(), window.ms);
  // A window once full stays full: a flood is refused without a write per request (each would cost one).
  if (entry.full === start) throw new TooManyRequests(retryAfterSeconds);
  const expiresAt = Math.ceil((start + window.ms) / 1000) + RECORD_TTL_SECONDS;
  const counted = countRequest(tenant, start, window.limit, expiresAt).then(
    (room) => {
      if (room) return;
      entry.full = start;
      throw new TooManyRequests(retryAfterSeconds);
    },
    (err) => logger.warn("rate limit not checked", { tenant_id: tenant, error: err }),
  );
  return { counted };
}

/** Counts a request of the workspace and waits for the count: TooManyRequests when its window is full. */
export async function admitRequest(tenant: string): Promise<void> {
  await (await startCount(tenant)).counted;
}
