import { PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import {
  BaseStore,
  type GetOperation,
  InvalidNamespaceError,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import { dynamo } from "../../aws/clients.ts";
import { isConditionFailure, queryPages, toItem } from "../../aws/ddb.ts";
import { PayloadTooLarge } from "../../errors.ts";
import { type StoreItemRecord, storeItems, storeKeys } from "../../records/agent.ts";
import { tableName } from "../../tables.ts";
import { isoNow } from "../../time.ts";
import type { RuntimeArtifact } from "../artifact/artifact.ts";
import { storeTtl } from "../artifact/ttl.ts";
import { matchesFilter, matchesNamespace } from "./match.ts";
import { storeIndex } from "./search-index.ts";
import { decodeVectors, encodeVectors, rankByQuery, textsToEmbed } from "./vectors.ts";

// LangGraph's long-term memory store on DynamoDB (records and keys: shared/records/agent.ts). One partition per
// scope, PK `<scope>#STORE`; SK is each label followed by ":" then "." then the key (`users:u1:.prefs`). Labels cannot hold ":" or "." (validateNamespace
// rejects them), so the first "." ends the namespace, and `users:` is a key prefix matching exactly the namespace
// ["users"] and everything below it: a search or a namespace listing is one Query over a key range.
// Semantic search (langgraph.json store.index, store-index.ts): a put embeds the item's fields and keeps the
// vectors in its record; a search with `query` ranks the items under the prefix (after the filter) by cosine
// similarity and answers their `score` — a scan of the prefix, there is no vector index in DynamoDB. Without
// store.index, `query` is ignored and items come without score, as InMemoryStore without an index does (the
// HTTP store API refuses a `query` then, shared/agent/store/api.ts).
// TTL (the reference server's, in minutes; LangGraph.js's BaseStore has none, so it rides on the operations:
// StorePutOperation, and `refreshTtl` on reads): an item put with one carries `ttl_minutes` and `expires_at`
// (epoch seconds); a put without one (undefined; null means none) takes store.ttl.default_ttl. Every read skips
// an item whose `expires_at` has passed; DynamoDB's TTL on the table deletes it later. A read that returns an
// item with a TTL moves its expiry to now + TTL unless told `refreshTtl: false` (default:
// store.ttl.refresh_on_read).
const T = "checkpoints" as const;
const MAX_SK_BYTES = 1024;
const MAX_VALUE_BYTES = 350 * 1024;

/** A put with a time to live in minutes (absent: store.ttl.default_ttl; null: the item does not expire). */
export type StorePutOperation = PutOperation & { ttl?: number | null };
/** Reads that refresh the TTL of the items they return unless `refreshTtl` is false. */
export type StoreGetOperation = GetOperation & { refreshTtl?: boolean };
export type StoreSearchOperation = SearchOperation & { refreshTtl?: boolean };
/** Whether a read refreshes TTLs: as the operation says, else as store.ttl.refresh_on_read says (default yes). */
const refreshes = async (artifact: RuntimeArtifact | undefined, op: { refreshTtl?: boolean }) =>
  op.refreshTtl ?? (await storeTtl(artifact)).refresh_on_read;

const nowSeconds = () => Date.now() / 1000;
/** An item past its expiry: gone for every read, whether or not DynamoDB's TTL has deleted it yet. */
const expired = (row: Pick<StoreItemRecord, "expires_at">, now = nowSeconds()) =>
  row.expires_at !== undefined && row.expires_at <= now;
const expiryOf = (ttlMinutes: number) => Math.ceil(nowSeconds() + ttlMinutes * 60);
/** The REMOVE clause of a put: a TTL or vectors an earlier put left and this one does not set go. */
const removed = (noTtl: boolean, noVectors: boolean) => {
  const attrs = [...(noTtl ? ["ttl_minutes", "expires_at"] : []), ...(noVectors ? ["vectors"] : [])];
  return attrs.length ? ` REMOVE ${attrs.join(", ")}` : "";
};

export interface DynamoStoreOptions {
  /** `<tenant>#<deployment>`, as for the checkpointer. */
  scope: string;
  /** In a runtime: the revision's artifact, whose langgraph.json store.index and store.ttl apply. */
  artifact?: RuntimeArtifact;
}

const { nsPrefix, sortKey } = storeKeys;
/** The smallest string above every string that starts with `prefix` (its last character is ASCII here). */
const pastPrefix = (prefix: string) =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

function checkNamespace(ns: string[], key?: string) {
  validateNamespace(ns, { allowReservedRoot: true });
  if (key !== undefined && typeof key !== "string")
    throw new InvalidNamespaceError("An item key must be a string.");
  if (Buffer.byteLength(sortKey(ns, key ?? "")) > MAX_SK_BYTES)
    throw new InvalidNamespaceError(`Namespace and key together must stay under ${MAX_SK_BYTES} bytes.`);
}

export class DynamoStore extends BaseStore {
  readonly scope: string;
  private readonly pk: string;
  private readonly artifact: RuntimeArtifact | undefined;

  constructor(options: DynamoStoreOptions) {
    super();
    if (!options.scope) throw new Error("DynamoStore needs a scope");
    this.scope = options.scope;
    this.pk = storeKeys.pk(options.scope);
    this.artifact = options.artifact;
  }

  /** Has the revision an embeddings index (langgraph.json store.index), which a semantic search needs? */
  async hasIndex(): Promise<boolean> {
    return (await storeIndex(this.artifact)) !== undefined;
  }

  /** `put` with a TTL in minutes, as the reference server's store API takes it. */
  async putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    options: { index?: false | string[]; ttl?: number | null } = {},
  ): Promise<void> {
    const op: StorePutOperation = { namespace, key, value, index: options.index };
    if (options.ttl !== undefined) op.ttl = options.ttl;
    await this.batch([op]);
  }

  /** `get`, saying whether to refresh the item's TTL (default: yes). */
  async getItem(namespace: string[], key: string, options: { refreshTtl?: boolean } = {}) {
    const op: StoreGetOperation = { namespace, key, refreshTtl: options.refreshTtl };
    const [item] = await this.batch([op]);
    return item;
  }

  /** `search`, saying whether to refresh the TTLs of the items found (default: yes). */
  async searchItems(
    namespacePrefix: string[],
    options: {
      filter?: Record<string, unknown>;
      limit?: number;
      offset?: number;
      query?: string;
      refreshTtl?: boolean;
    } = {},
  ): Promise<SearchItem[]> {
    const op: StoreSearchOperation = { namespacePrefix, ...options };
    const [items] = await this.batch([op]);
    return items;
  }

  /** Reads see the state before the batch; puts apply after them, the last put of a key winning (as InMemoryStore). */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const puts = new Map<string, StorePutOperation>();
    const results = await Promise.all(
      operations.map(async (op) => {
        if ("namespacePrefix" in op) return this.searchOne(op);
        if ("matchConditions" in op) return this.listOne(op);
        if ("value" in op) {
          checkNamespace(op.namespace, op.key);
          puts.set(sortKey(op.namespace, op.key), op);
          return null;
        }
        if ("namespace" in op) return this.getOne(op);
        throw new Error(`Unknown store operation: ${JSON.stringify(op)}`);
      }),
    );
    await Promise.all([...puts.values()].map((op) => this.putOne(op)));
    return results as OperationResults<Op>;
  }

  private async getOne(op: StoreGetOperation): Promise<Item | null> {
    checkNamespace(op.namespace, op.key);
    const row = await storeItems.get({ scope: this.scope, namespace: op.namespace, key: op.key });
    if (!row || expired(row)) return null;
    if (await refreshes(this.artifact, op)) await this.refresh(row);
    return toStoreItem(row);
  }

  /** Moves the expiry of an item read alive to now + its TTL, unless it was put or refreshed again meanwhile. */
  private async refresh(row: StoreItemRecord): Promise<void> {
    if (row.ttl_minutes === undefined || row.expires_at === undefined) return;
    const k = { scope: this.scope, namespace: row.namespace, key: row.key };
    await storeItems.update(k, {
      set: { expires_at: expiryOf(row.ttl_minutes) },
      when: { expires_at: row.expires_at },
    });
  }

  /** The item's vectors: its `index` fields (else store.index.fields, else the whole value) embedded. */
  private async vectorsOf(op: StorePutOperation): Promise<Uint8Array | undefined> {
    if (op.index === false) return undefined;
    const index = await storeIndex(this.artifact);
    if (!index) return undefined;
    const texts = textsToEmbed(op.value, op.index ?? index.fields);
    if (!texts.length) return undefined;
    return encodeVectors(await index.embedDocuments(texts), index.dims);
  }

  private async putOne(op: StorePutOperation): Promise<void> {
    const k = { scope: this.scope, namespace: op.namespace, key: op.key };
    if (op.value === null) {
      await storeItems.delete(k);
      return;
    }
    const value = JSON.stringify(op.value);
    if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new PayloadTooLarge(MAX_VALUE_BYTES);
    const vectors = await this.vectorsOf(op);
    // Vectors share the item's 400 KB with the value (dims × 4 bytes per embedded text).
    if (vectors && Buffer.byteLength(value) + vectors.byteLength > MAX_VALUE_BYTES)
      throw new PayloadTooLarge(MAX_VALUE_BYTES);
    const ttl = op.ttl === undefined ? (await storeTtl(this.artifact)).default_ttl : (op.ttl ?? undefined);
    if (ttl !== undefined && !(Number.isFinite(ttl) && ttl > 0))
      throw new RangeError("A store item's ttl must be a positive number of minutes.");
    const now = isoNow();
    const expiry = ttl === undefined ? {} : { ":ttl": ttl, ":expires": expiryOf(ttl) };
    try {
      // Replaces a live item (keeping its created_at); an expired one still stored is replaced whole, below.
      await dynamo().send(
        new UpdateItemCommand({
          TableName: tableName(T),
          Key: toItem(storeItems.key(k)),
          UpdateExpression: `SET #value = :value, #namespace = :namespace, #key = :key, updated_at = :now, created_at = if_not_exists(created_at, :now)${
            ttl === undefined ? "" : ", ttl_minutes = :ttl, expires_at = :expires"
          }${vectors ? ", vectors = :vectors" : ""}${removed(ttl === undefined, !vectors)}`,
          ConditionExpression: "attribute_not_exists(expires_at) OR expires_at > :clock",
          ExpressionAttributeNames: { "#value": "value", "#namespace": "namespace", "#key": "key" },
          ExpressionAttributeValues: toItem({
            ":value": value,
            ":namespace": op.namespace,
            ":key": op.key,
            ":now": now,
            ":clock": nowSeconds(),
            ...expiry,
            ...(vectors ? { ":vectors": vectors } : {}),
          }),
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const record: StoreItemRecord = {
        ...storeItems.key(k),
        namespace: op.namespace,
        key: op.key,
        value,
        created_at: now,
        updated_at: now,
        ...(ttl === undefined ? {} : { ttl_minutes: ttl, expires_at: expiryOf(ttl) }),
        ...(vectors ? { vectors } : {}),
      };
      await dynamo().send(new PutItemCommand({ TableName: tableName(T), Item: toItem(record) }));
    }
  }

  /** Items under a namespace prefix in key order, filtered, then offset and limit applied; stops reading early. */
  private async searchOne(op: StoreSearchOperation): Promise<SearchItem[]> {
    if (op.namespacePrefix.length) checkNamespace(op.namespacePrefix);
    const index = op.query ? await storeIndex(this.artifact) : undefined;
    if (op.query && index) return this.semanticSearch(op, op.query, index);
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const found: StoreItemRecord[] = [];
    let skipped = 0;
    if (limit <= 0) return [];
    const now = nowSeconds();
    search: for await (const page of this.range(nsPrefix(op.namespacePrefix))) {
      for (const row of page) {
        if (expired(row, now)) continue;
        if (op.filter && !matchesFilter(JSON.parse(row.value), op.filter)) continue;
        if (skipped < offset) skipped++;
        else found.push(row);
        if (found.length >= limit) break search;
      }
    }
    if (await refreshes(this.artifact, op)) await Promise.all(found.map((row) => this.refresh(row)));
    return found.map((row) => ({ ...toStoreItem(row), score: undefined }));
  }

  /** The live items under the prefix that pass the filter, ranked by similarity to `query`; offset, limit. */
  private async semanticSearch(
    op: StoreSearchOperation,
    query: string,
    index: NonNullable<Awaited<ReturnType<typeof storeIndex>>>,
  ): Promise<SearchItem[]> {
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    if (limit <= 0) return [];
    const queryVector = await index.embedQuery(query);
    const now = nowSeconds();
    const candidates: { item: StoreItemRecord; vectors: Float32Array[] }[] = [];
    for await (const page of this.range(nsPrefix(op.namespacePrefix)))
      for (const row of page) {
        if (expired(row, now)) continue;
        if (op.filter && !matchesFilter(JSON.parse(row.value), op.filter)) continue;
        candidates.push({ item: row, vectors: row.vectors ? decodeVectors(row.vectors, index.dims) : [] });
      }
    const found = rankByQuery(candidates, queryVector).slice(offset, offset + limit);
    if (await refreshes(this.artifact, op)) await Promise.all(found.map(({ item }) => this.refresh(item)));
    return found.map(({ item, score }) => ({ ...toStoreItem(item), score }));
  }

  /**
   * Distinct namespaces (cut to maxDepth) matching every condition, sorted label by label. Reads one page per
   * run of a namespace's items and then seeks past them, so the cost follows the namespaces, not the items.
   */
  private async listOne(op: ListNamespacesOperation): Promise<string[][]> {
    const conditions = op.matchConditions ?? [];
    const firstPrefix = conditions.find((c) => c.matchType === "prefix")?.path ?? [];
    const star = firstPrefix.indexOf("*");
    const fixed = star === -1 ? firstPrefix : firstPrefix.slice(0, star);
    const found = new Map<string, string[]>();
    let from = nsPrefix(fixed);
    const end = fixed.length ? pastPrefix(from) : undefined;
    for (;;) {
      const page = await this.rangePage(from, end, 50);
      if (!page.length) break;
      const now = nowSeconds();
      for (const row of page) {
        if (expired(row, now)) continue;
        const ns = row.namespace;
        if (!conditions.every((c) => matchesNamespace(ns, c))) continue;
        const cut = op.maxDepth === undefined ? ns : ns.slice(0, op.maxDepth);
        found.set(JSON.stringify(cut), cut);
      }
      // Seek past the items of the page's last namespace: `<prefix>.` then the first string after them.
      from = `${nsPrefix(page[page.length - 1].namespace)}/`;
    }
    const sorted = [...found.values()].sort(compareNamespaces);
    const offset = op.offset ?? 0;
    return sorted.slice(offset, op.limit === undefined ? undefined : offset + op.limit);
  }

  private range(prefix: string): AsyncGenerator<StoreItemRecord[]> {
    return storeItems.pages(this.pk, { prefix, consistent: true });
  }

  /** One page of items with SK from `from` (inclusive) up to `end` (exclusive): namespaces and expiries only. */
  private async rangePage(
    from: string,
    end: string | undefined,
    limit: number,
  ): Promise<Pick<StoreItemRecord, "namespace" | "expires_at">[]> {
    const [cond, values] = end
      ? ["SK BETWEEN :from AND :end", { ":from": from, ":end": end }]
      : from
        ? ["SK >= :from", { ":from": from }]
        : [undefined, {}];
    for await (const page of queryPages<Pick<StoreItemRecord, "namespace" | "expires_at">>(T, {
      KeyConditionExpression: cond ? `PK = :pk AND ${cond}` : "PK = :pk",
      values: { ":pk": this.pk, ...values },
      ProjectionExpression: "#namespace, expires_at",
      ExpressionAttributeNames: { "#namespace": "namespace" },
      ConsistentRead: true,
      Limit: limit,
    }))
      return page;
    return [];
  }
}

function toStoreItem(row: StoreItemRecord): Item {
  return {
    namespace: row.namespace,
    key: row.key,
    value: JSON.parse(row.value),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}
