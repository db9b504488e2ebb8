import { config } from "../config.ts";
import { TooManyRequests } from "../errors.ts";
import { logger } from "../log.ts";
import { addRequests, tenants } from "../records/identity.ts";
import { type RateWindow, WindowCounter } from "./window-counter.ts";

// Requests per workspace (issue 25). Every request authenticated as a workspace — the platform's API handlers
// (shared/http/middlewares.ts) and agent-server requests (shared/agent/edge/router-access.ts), locally and in AWS — is
// counted in a fixed window that every process and Lambda container shares (a record of the main table per
// workspace and window, expired by TTL). Each request is decided in memory and its count added to the record
// later (window-counter.ts): no request waits for a write. A full window answers 429 with Retry-After, the whole
// seconds until the next window.

export interface RateLimit {
  /** Requests per second on average; 0 (or less): no limit. */
  perSecond: number;
  /** Requests at once: what one window holds. */
  burst: number;
}

/** A burst defaults to this many seconds' worth of requests. */
export const BURST_SECONDS = 5;
/** No window is longer (a tiny rate with a large burst would otherwise lock a workspace out for days). */
const MAX_WINDOW_MS = 3_600_000;

/** The window a limit counts in: `burst` requests (at least one) per burst/perSecond seconds; none when off. */
export function rateWindow(l: RateLimit): RateWindow | undefined {
  if (!(l.perSecond > 0)) return undefined;
  const limit = Math.max(1, Math.floor(Number.isFinite(l.burst) ? l.burst : 0));
  const ms = Math.min(MAX_WINDOW_MS, Math.max(1, Math.round((limit / l.perSecond) * 1000)));
  return { limit, ms };
}

/** The setting's limit, or the workspace record's own (`rate_limit`, `rate_burst`) when the operator set one. */
export function limitFor(own: { rate_limit?: number; rate_burst?: number } | undefined): RateLimit {
  const setting = config.workspaceRate;
  const perSecond = own?.rate_limit ?? setting.perSecond;
  const burst = own?.rate_burst ?? (own?.rate_limit === undefined ? setting.burst : undefined);
  return { perSecond, burst: burst ?? perSecond * BURST_SECONDS };
}

/** Per workspace: its window, known until `until`. */
interface Cached {
  window: RateWindow | undefined;
  until: number;
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

const counter = new WindowCounter(addRequests);

/**
 * Counts a request of the workspace: TooManyRequests when its window is full. Decided in memory (the workspace's
 * limit is read at most once per AUTH_CACHE_MS). WORKSPACE_RATE_LIMIT=0 turns the limiter off (workspaces' own
 * limits too). If the workspace's record cannot be read the request passes with a warning: the limiter must never
 * be what takes the API down.
 */
export async function admitRequest(tenant: string): Promise<void> {
  if (!(config.workspaceRate.perSecond > 0)) return;
  let window: RateWindow | undefined;
  try {
    window = (await cached(tenant)).window;
  } catch (err) {
    logger.warn("rate limit not checked", { tenant_id: tenant, error: err });
    return;
  }
  if (!window) return;
  const decision = await counter.admit(tenant, window);
  if (!decision.admitted) throw new TooManyRequests(decision.retryAfterSeconds);
}
