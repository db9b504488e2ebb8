import { AsyncLocalStorage } from "node:async_hooks";
import { Forbidden, HttpError, NotFound } from "../../errors.ts";
import { logger } from "../../log.ts";

// Custom auth (langgraph.json `auth.path`), as the reference LangGraph server applies an `Auth` of
// `@langchain/langgraph-sdk/auth` — the request side. The deployment's runtime (the only process that imports
// the deployment's code: runtime/custom-auth.ts) installs the Auth's handlers here and runs each request inside
// its identity; the agent server's handlers ask `authorize(event, value)` before they act:
// - the handler registered for the event is picked as the reference does: `resource:action`, then `resource`,
//   then `*:action`, then `*`; none → allowed, unscoped;
// - it returns nothing or true → allowed; false → 403; an object → filters on the resource's metadata
//   (`{key: value}`, `{key: {$eq: value}}`, `{key: {$contains: value}}`) that scope what the user sees: a
//   resource outside them is a 404, a search only finds resources inside them;
// - it may change `value` (e.g. add `metadata.owner` on create, prefix a store namespace): the handler acts on
//   the changed value.
// A request on a deployment without custom auth has no identity here and everything is allowed, as before.

/** The user a request acts for, as handlers see it (`BaseUser` of the SDK, plus what authenticate returned). */
export interface AuthUser {
  identity: string;
  display_name: string;
  is_authenticated: boolean;
  permissions: string[];
  [key: string]: unknown;
}

export type AuthFilters = Record<string, unknown>;

type Callback = (request: {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  user: AuthUser;
  permissions: string[];
}) => unknown;

/** What an `Auth` instance registered (its `~handlerCache`). */
export interface AuthHandlers {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, Callback>;
}

/** The identity the platform's operators act with (a platform API key): the reference's Studio user. */
export const OPERATOR: AuthUser = Object.freeze({
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  display_name: "langgraph-studio-user",
  is_authenticated: true,
  permissions: [],
}) as AuthUser;

interface RequestAuth {
  user: AuthUser;
  callbacks: Record<string, Callback>;
}
const current = new AsyncLocalStorage<RequestAuth>();

/** Runs `fn` as `user`, under the deployment's Auth handlers. */
export function runAs<T>(user: AuthUser, handlers: AuthHandlers, fn: () => T): T {
  return current.run({ user, callbacks: handlers.callbacks ?? {} }, fn);
}

/** The user the current request acts for (custom auth only). */
export function authUser(): AuthUser | undefined {
  return current.getStore()?.user;
}

/**
 * What the run's config carries about its user, as the reference server passes it to graphs
 * (`config.configurable.langgraph_auth_user` …): nothing without custom auth.
 */
export function authConfigurable(): Record<string, unknown> {
  const user = authUser();
  if (!user) return {};
  return {
    langgraph_auth_user: JSON.parse(JSON.stringify(user)),
    langgraph_auth_user_id: user.identity,
    langgraph_auth_permissions: user.permissions,
  };
}

/** An authenticate result (a string or an object with `identity`) as the user handlers see. */
export function toAuthUser(result: unknown): AuthUser {
  if (typeof result === "string" && result) return userOf({ identity: result });
  if (result && typeof result === "object" && typeof (result as { identity?: unknown }).identity === "string")
    return userOf(result as { identity: string });
  throw new Error("authenticate must return a user identity (a string, or an object with `identity`)");
}

function userOf(r: { identity: string; [key: string]: unknown }): AuthUser {
  const out: AuthUser = {
    ...r,
    identity: r.identity,
    display_name: typeof r.display_name === "string" ? r.display_name : r.identity,
    is_authenticated: typeof r.is_authenticated === "boolean" ? r.is_authenticated : true,
    permissions: Array.isArray(r.permissions) ? r.permissions.map(String) : [],
  };
  // Functions and the like do not survive into a run's config; keep what JSON keeps.
  for (const [k, v] of Object.entries(out)) if (typeof v === "function") delete out[k];
  return out;
}

/**
 * An error thrown by the deployment's auth code as the answer it asks for: an `HTTPException` (any copy of
 * the SDK's class: duck-typed by its numeric `status`) keeps its status and message; anything else is `fallback`.
 */
export function authFailure(err: unknown, fallback: 401 | 403): HttpError {
  const e = err as { status?: unknown; message?: unknown; headers?: unknown } | null;
  const status = typeof e?.status === "number" && e.status >= 400 && e.status <= 599 ? e.status : undefined;
  if (status === undefined) {
    logger.warn("custom auth handler failed", { error: err });
    return fallback === 401 ? new HttpError(401, "Unauthorized") : new Forbidden("Forbidden");
  }
  const message = typeof e?.message === "string" && e.message ? e.message : "Unauthorized";
  return new HttpError(status, message);
}

/**
 * Asks the deployment's Auth whether the current user may do `event` ("threads:create", …) with `value` (which
 * the handler may change in place). Returns the filters that scope the resource, or undefined for none.
 */
export async function authorize(
  event: string,
  value: Record<string, unknown>,
): Promise<AuthFilters | undefined> {
  const auth = current.getStore();
  if (!auth) return undefined;
  const [resource, action] = event.split(":") as [string, string];
  const cb =
    auth.callbacks[event] ?? auth.callbacks[resource] ?? auth.callbacks[`*:${action}`] ?? auth.callbacks["*"];
  if (!cb) return undefined;
  let result: unknown;
  try {
    result = await cb({
      event,
      resource,
      action,
      value,
      user: auth.user,
      permissions: auth.user.permissions,
    });
  } catch (err) {
    throw authFailure(err, 403);
  }
  if (result === undefined || result === null || result === true) return undefined;
  if (result === false) throw new Forbidden("Forbidden");
  if (typeof result !== "object" || Array.isArray(result)) {
    logger.warn("custom auth handler returned neither a boolean nor filters", { event });
    throw new Forbidden("Forbidden");
  }
  const filters = result as AuthFilters;
  return Object.keys(filters).length ? filters : undefined;
}

/** Whether `metadata` satisfies the filters an auth handler returned. */
export function matchesAuthFilters(metadata: unknown, filters: AuthFilters | undefined): boolean {
  if (!filters) return true;
  const m = (metadata && typeof metadata === "object" ? metadata : {}) as Record<string, unknown>;
  for (const [key, want] of Object.entries(filters)) {
    const have = m[key];
    if (want && typeof want === "object" && !Array.isArray(want)) {
      const ops = want as Record<string, unknown>;
      for (const [op, operand] of Object.entries(ops)) {
        if (op === "$eq") {
          if (!sameJson(have, operand)) return false;
        } else if (op === "$contains") {
          if (!Array.isArray(have) || !have.some((h) => sameJson(h, operand))) return false;
        } else return false;
      }
    } else if (!sameJson(have, want)) return false;
  }
  return true;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The metadata a resource created under `filters` gets so that its creator finds it again: each equality
 * (`{key: value}` or `{key: {$eq: value}}`) written into it.
 */
export function metadataOfFilters(filters: AuthFilters | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, want] of Object.entries(filters ?? {})) {
    if (want && typeof want === "object" && !Array.isArray(want)) {
      if ("$eq" in want) out[key] = (want as { $eq: unknown }).$eq;
    } else out[key] = want;
  }
  return out;
}

/**
 * Checks a single resource against the filters for `event`: one the user may not see is a 404, as if it did
 * not exist (the reference answers so). `load` reads the resource's metadata only when there are filters.
 */
export async function authorizeOne(
  event: string,
  value: Record<string, unknown>,
  load: () => Promise<{ metadata?: unknown } | undefined>,
  notFound: string,
): Promise<void> {
  const filters = await authorize(event, value);
  if (!filters) return;
  const resource = await load();
  if (!resource || !matchesAuthFilters(resource.metadata, filters)) throw new NotFound(notFound);
}
