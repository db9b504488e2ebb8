import { InvalidNamespaceError, type Item } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { validationError } from "../../errors.ts";
import { qFlag } from "../../http/query.ts";
import type { DynamoStore } from "./store.ts";

// The store API of the reference LangGraph server (`/store/items`, `/store/items/search`, `/store/namespaces`)
// over the deployment's own DynamoStore (its `store()`, handed in by the operations): the very store its graphs read and write with `store.put`, scoped to
// the deployment. Namespace labels may not be empty nor hold "." (the GET form joins them with dots) — nor ":"
// or NUL, which the store's keys cannot take. A semantic `query` needs langgraph.json store.index: without it
// a search with one is refused.

const LABEL_RULES = "Namespace labels cannot be empty or contain periods ('.'), colons (':') or NUL bytes";
const label = z
  .string()
  .min(1, LABEL_RULES)
  .refine((l) => !/[.:\0]/.test(l), LABEL_RULES);
/** A namespace as the request bodies give it: a list of labels. */
const namespace = z.array(label).min(1, "A namespace needs at least one label").max(100);
/** A namespace prefix or suffix of a listing: labels, `*` matching any one label. */
const namespacePattern = z.array(label).max(100);
const obj = z.record(z.string(), z.unknown());

export const storePut = z.object({
  namespace,
  key: z.string(),
  value: obj,
  /** Fields to embed for semantic search (store.index): false = not indexed; absent = store.index.fields. */
  index: z.union([z.literal(false), z.array(z.string()).max(100)]).nullish(),
  /** Minutes the item lives (refreshed by reads); absent: store.ttl.default_ttl; null: it does not expire. */
  ttl: z.number().positive().nullish(),
});

export const storeDelete = z.object({ namespace, key: z.string() });

/** GET's query: the namespace joined with ".", as the SDKs send it. */
export const storeGet = z.object({
  namespace: z
    .string()
    .transform((s) => s.split("."))
    .pipe(namespace),
  key: z.string(),
  refresh_ttl: qFlag.optional(),
});

export const storeSearch = z.object({
  namespace_prefix: namespacePattern.nullish(),
  filter: obj.nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  query: z.string().nullish(),
  refresh_ttl: z.boolean().nullish(),
});

export const storeNamespaces = z.object({
  prefix: namespacePattern.nullish(),
  suffix: namespacePattern.nullish(),
  max_depth: z.number().int().min(1).nullish(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});

const itemWire = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: obj,
  created_at: z.string(),
  updated_at: z.string(),
});
export const storeItemResponse = itemWire.nullable();
export const storeSearchResponse = z.object({
  items: z.array(itemWire.extend({ score: z.number().optional() })),
});
export const storeNamespacesResponse = z.object({ namespaces: z.array(z.array(z.string())) });

export type StoreItemWire = z.infer<typeof itemWire>;

const toWire = (item: Item & { score?: number }): StoreItemWire & { score?: number } => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  created_at: item.createdAt.toISOString(),
  updated_at: item.updatedAt.toISOString(),
  ...(item.score === undefined ? {} : { score: item.score }),
});

/** What the store still refuses after validation (a namespace and key too long for its keys) is a 422 at `loc`. */
async function refusing<T>(loc: (string | number)[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof InvalidNamespaceError) throw validationError(loc, err.message);
    throw err;
  }
}

export async function putStoreItem(store: DynamoStore, body: z.infer<typeof storePut>): Promise<void> {
  await refusing(["body", "namespace"], () =>
    store.putItem(body.namespace, body.key, body.value, {
      index: body.index ?? undefined,
      ttl: body.ttl,
    }),
  );
}

export async function getStoreItem(
  store: DynamoStore,
  query: z.infer<typeof storeGet>,
): Promise<StoreItemWire | null> {
  const item = await refusing(["query", "namespace"], () =>
    store.getItem(query.namespace, query.key, { refreshTtl: query.refresh_ttl }),
  );
  return item ? toWire(item) : null;
}

export async function deleteStoreItem(store: DynamoStore, body: z.infer<typeof storeDelete>): Promise<void> {
  await refusing(["body", "namespace"], () => store.delete(body.namespace, body.key));
}

export async function searchStoreItems(
  store: DynamoStore,
  body: z.infer<typeof storeSearch>,
): Promise<{ items: (StoreItemWire & { score?: number })[] }> {
  if (body.query && !(await store.hasIndex()))
    throw validationError(
      ["body", "query"],
      "Semantic search needs an embeddings index (langgraph.json store.index), which this deployment does not " +
        "configure: search with namespace_prefix and filter instead",
    );
  const items = await refusing(["body", "namespace_prefix"], () =>
    store.searchItems(body.namespace_prefix ?? [], {
      filter: body.filter ?? undefined,
      limit: body.limit,
      offset: body.offset,
      query: body.query ?? undefined,
      refreshTtl: body.refresh_ttl ?? undefined,
    }),
  );
  return { items: items.map(toWire) };
}

export async function listStoreNamespaces(
  store: DynamoStore,
  body: z.infer<typeof storeNamespaces>,
): Promise<{ namespaces: string[][] }> {
  const namespaces = await store.listNamespaces({
    prefix: body.prefix ?? undefined,
    suffix: body.suffix ?? undefined,
    maxDepth: body.max_depth ?? undefined,
    limit: body.limit,
    offset: body.offset,
  });
  return { namespaces };
}
