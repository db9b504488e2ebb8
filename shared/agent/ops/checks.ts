import { Conflict, Forbidden, NotFound } from "../../errors.ts";
import { crons } from "../../records/agent.ts";
import { type Assistant, getAssistant } from "../assistants/assistants.ts";
import {
  type AuthFilters,
  authorize,
  authorizeOne,
  matchesAuthFilters,
  metadataOfFilters,
} from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { storeSearch } from "../store/api.ts";
import { getThreadItem } from "../threads/threads.ts";

// The agent server's custom-auth checks by resource (auth-scope.ts has the rules): each handler asks before it
// acts. Without custom auth each is a no-op that reads nothing.

type ThreadAction = "read" | "update" | "delete";

/**
 * Authorizes a create body as the handler sees it: with its `thread_id` (which the route's path gives, not the
 * body). The handler changes the body itself (`value.metadata ??= {}` must reach it), so the id is added to
 * the body for the call and taken away after.
 */
async function authorizeWithThread(event: string, value: object, threadId: string | null) {
  const body = value as Record<string, unknown>;
  const had = "thread_id" in body;
  body.thread_id = threadId;
  try {
    return await authorize(event, body);
  } finally {
    if (!had) delete body.thread_id;
  }
}

/** May the user `action` the thread? One outside their filters is not found. */
export const threadAccess = (
  d: AgentDeployment,
  threadId: string,
  action: ThreadAction,
  value: Record<string, unknown> = {},
): Promise<void> =>
  authorizeOne(
    `threads:${action}`,
    { thread_id: threadId, ...value },
    () => getThreadItem(d, threadId),
    `Thread with ID ${threadId} not found`,
  );

/**
 * May the user create a run with `value` (the run's fields, which the handler may change)? On a thread, the
 * thread must be inside the filters; a thread that does not exist yet is checked when it is created.
 */
export async function runAccess(
  d: AgentDeployment,
  threadId: string | null,
  value: Record<string, unknown>,
): Promise<{ threadMetadata?: Record<string, unknown> }> {
  const filters = await authorizeWithThread("threads:create_run", value, threadId);
  if (!filters) return {};
  const thread = threadId ? await getThreadItem(d, threadId) : undefined;
  if (thread && !matchesAuthFilters(thread.metadata, filters))
    throw new NotFound(`Thread with ID ${threadId} not found`);
  // A thread the run creates (stateless, or if_not_exists: create) is the user's.
  return { threadMetadata: metadataOfFilters(filters) };
}

/**
 * May the user create a resource (`value` is the create body, which the handler may change, e.g. to add an owner
 * to its metadata; the filters' equalities are written into it)? Returns a check for what the create answers:
 * an existing one (`if_exists: do_nothing`) outside the filters is a conflict, as if the id were taken.
 */
async function createAccess(
  event: string,
  value: { metadata?: Record<string, unknown> | null },
  taken: string,
) {
  const filters = await authorize(event, value);
  if (filters) value.metadata = { ...(value.metadata ?? {}), ...metadataOfFilters(filters) };
  return <T extends { metadata?: unknown }>(created: T): T => {
    if (!matchesAuthFilters(created.metadata, filters)) throw new Conflict(taken);
    return created;
  };
}

export const threadCreateAccess = (value: { metadata?: Record<string, unknown> }) =>
  createAccess("threads:create", value, "Thread already exists");

/** The assistant, if the user may `action` it (one outside their filters is not found). */
export async function authorizedAssistant(
  d: AgentDeployment,
  assistantId: string,
  action: "read" | "update" | "delete" = "read",
  value: Record<string, unknown> = {},
): Promise<Assistant> {
  const filters = await authorize(`assistants:${action}`, { assistant_id: assistantId, ...value });
  const assistant = await getAssistant(d, assistantId);
  if (!matchesAuthFilters(assistant.metadata, filters)) throw new NotFound("Assistant not found");
  return assistant;
}

export const assistantCreateAccess = (value: { metadata?: Record<string, unknown> }) =>
  createAccess("assistants:create", value, "Assistant already exists");

export const cronAccess = (
  d: AgentDeployment,
  cronId: string,
  action: "read" | "update" | "delete",
  value: Record<string, unknown> = {},
): Promise<void> =>
  authorizeOne(
    `crons:${action}`,
    { cron_id: cronId, ...value },
    () => crons.get({ scope: d.scope, cron: cronId }, true),
    "Cron not found",
  );

/**
 * May the user create a cron (`value`: the create body; its metadata gets the filters' equalities)? A cron on a
 * thread also needs the thread to be the user's: its ticks create runs there.
 */
export async function cronCreateAccess(
  d: AgentDeployment,
  threadId: string | null,
  value: { metadata?: Record<string, unknown> | null },
): Promise<void> {
  const filters = await authorizeWithThread("crons:create", value, threadId);
  if (filters) value.metadata = { ...(value.metadata ?? {}), ...metadataOfFilters(filters) };
  if (threadId) await threadAccess(d, threadId, "update");
}

/** The filters a search is scoped by (`event` is "threads:search", "assistants:search" or "crons:search"). */
export const searchScope = (
  event: string,
  value: Record<string, unknown>,
): Promise<AuthFilters | undefined> => authorize(event, value);

/**
 * A store call: the handler may rewrite `value.namespace` (the reference's way of giving each user their own
 * part of the store); a store handler cannot scope by filters, so one that returns filters is refused.
 */
export async function storeAccess<V extends { namespace?: string[] | null }>(
  action: "put" | "get" | "search" | "list_namespaces" | "delete",
  value: V,
): Promise<V> {
  const filters = await authorize(`store:${action}`, value);
  if (filters)
    throw new Forbidden("Store authorization handlers cannot return filters: change value.namespace instead");
  if (value.namespace != null && !storeSearch.shape.namespace_prefix.safeParse(value.namespace).success)
    throw new Forbidden("The store authorization handler set a namespace the store cannot take");
  return value;
}
