import { z } from "zod";
import { CREATE_ONLY, cancelCodes, transact } from "../aws/ddb.ts";
import { Conflict, NotFound, validationError } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import { type ListenerRecord, listenerComputeIds, listeners, listenersPk } from "../records/control.ts";
import { canonicalNow } from "../time.ts";

// Listeners (spec A, v2): a self-hosted compute cluster (Kubernetes) that runs deployments. Records:
// shared/records/control.ts (ids are uuidv7: the sort key lists newest first; compute ids unique per workspace).

/** A Kubernetes namespace name: an RFC 1123 label. */
const Namespace = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "k8s namespace must be an RFC 1123 label");

const ComputeConfig = z.looseObject({
  k8s_namespaces: z
    .array(Namespace)
    .max(100)
    .nullish()
    .transform((ns) => (ns ? [...new Set(ns)] : null)),
});

export const ListenerCreate = z.looseObject({
  /** The only compute type; the established API requires it, we default it. */
  compute_type: z.literal("k8s").default("k8s"),
  compute_id: z.string().trim().min(1).max(253),
  compute_config: ComputeConfig.nullish().transform((c) => c ?? { k8s_namespaces: null }),
  version: z.string().max(64).nullish(),
});
export type ListenerCreateIn = z.output<typeof ListenerCreate>;

export const ListenerPatch = z.looseObject({
  compute_config: ComputeConfig.nullish(),
  version: z.string().max(64).nullish(),
  // Immutable once created: accepted only when unchanged.
  compute_type: z.literal("k8s").optional(),
  compute_id: z.string().optional(),
});
export type ListenerPatchIn = z.output<typeof ListenerPatch>;

export const ListenerOut = z.object({
  id: z.string(),
  tenant_id: z.string(),
  compute_type: z.literal("k8s"),
  compute_id: z.string(),
  compute_config: z.object({ k8s_namespaces: z.array(z.string()).nullable() }),
  version: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Listener = z.output<typeof ListenerOut>;

export const ListenerList = z.object({ resources: z.array(ListenerOut), offset: z.number().int() });

function toListener(item: ListenerRecord): Listener {
  return {
    id: item.id,
    tenant_id: item.tenant_id,
    compute_type: "k8s",
    compute_id: item.compute_id,
    compute_config: { k8s_namespaces: item.compute_config?.k8s_namespaces ?? null },
    version: item.version ?? null,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/** The listener, or undefined for an unknown id or another workspace's (any string is a safe id here). */
export async function getListener(tenantId: string, listenerId: string): Promise<Listener | undefined> {
  if (!listenerId || listenerId.length > 128) return undefined;
  const item = await listeners.get({ tenant: tenantId, id: listenerId }, false);
  return item ? toListener(item) : undefined;
}

export async function requireListener(tenantId: string, listenerId: string): Promise<Listener> {
  const l = await getListener(tenantId, listenerId);
  if (!l) throw new NotFound("Listener not found");
  return l;
}

export async function createListener(tenantId: string, body: ListenerCreateIn): Promise<Listener> {
  const at = canonicalNow();
  const listener: Listener = {
    id: uuidv7(),
    tenant_id: tenantId,
    compute_type: "k8s",
    compute_id: body.compute_id,
    compute_config: { k8s_namespaces: body.compute_config.k8s_namespaces ?? null },
    version: body.version ?? null,
    created_at: at,
    updated_at: at,
  };
  try {
    await transact([
      {
        Put: listenerComputeIds.putInput(
          { tenant: tenantId, compute_id: listener.compute_id, listener_id: listener.id },
          CREATE_ONLY,
        ),
      },
      { Put: listeners.putInput(listener) },
    ]);
  } catch (err) {
    if (cancelCodes(err)?.[0] === "ConditionalCheckFailed")
      throw new Conflict(`A listener with compute_id '${listener.compute_id}' already exists`);
    throw err;
  }
  return listener;
}

/** Newest first; `offset` in the answer is the value for the next page. */
export async function listListeners(
  tenantId: string,
  q: { limit: number; offset: number },
): Promise<{ resources: Listener[]; offset: number }> {
  const want = q.offset + q.limit;
  const items: ListenerRecord[] = [];
  for await (const page of listeners.pages(listenersPk(tenantId), {
    newestFirst: true,
    limit: () => Math.min(want - items.length, 1000),
  })) {
    items.push(...page);
    if (items.length >= want) break;
  }
  const resources = items.slice(q.offset, want).map(toListener);
  return { resources, offset: q.offset + resources.length };
}

export async function updateListener(
  tenantId: string,
  listenerId: string,
  patch: ListenerPatchIn,
): Promise<Listener> {
  const current = await requireListener(tenantId, listenerId);
  if (patch.compute_id !== undefined && patch.compute_id !== current.compute_id)
    throw validationError(
      ["body", "compute_id"],
      "compute_id cannot be changed once the listener is created",
    );
  const set: Partial<ListenerRecord> = { updated_at: canonicalNow() };
  if (patch.compute_config !== undefined)
    set.compute_config = { k8s_namespaces: patch.compute_config?.k8s_namespaces ?? null };
  if (patch.version !== undefined) set.version = patch.version;
  const updated = await listeners.updateReturning({ tenant: tenantId, id: listenerId }, { set });
  if (!updated) throw new NotFound("Listener not found");
  return toListener(updated);
}

export async function deleteListener(tenantId: string, listenerId: string): Promise<void> {
  const current = await requireListener(tenantId, listenerId);
  await transact([
    { Delete: listeners.deleteInput({ tenant: tenantId, id: listenerId }) },
    { Delete: listenerComputeIds.deleteInput({ tenant: tenantId, compute_id: current.compute_id }) },
  ]);
}
