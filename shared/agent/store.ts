import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
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
import { dynamo } from "../aws/clients.ts";
import { queryPages, toItem } from "../aws/ddb.ts";
import { PayloadTooLarge } from "../errors.ts";
import { type StoreItemRecord, storeItems, storeKeys } from "../records/agent.ts";
import { tableName } from "../tables.ts";
import { isoNow } from "../time.ts";
import { matchesFilter, matchesNamespace } from "./store-match.ts";

// LangGraph's long-term memory store on DynamoDB (records and keys: shared/records/agent.ts). One partition per
// scope, PK `<scope>#STORE`; SK is each label followed by ":" then "." then the key (`users:u1:.prefs`). Labels cannot hold ":" or "." (validateNamespace
// rejects them), so the first "." ends the namespace, and `users:` is a key prefix matching exactly the namespace
// ["users"] and everything below it: a search or a namespace listing is one Query over a key range. No vector
// search: `query` is ignored and items come without score, as InMemoryStore without an index does.
const T = "checkpoints" as const;
const MAX_SK_BYTES = 1024;
const MAX_VALUE_BYTES = 350 * 1024;

export interface DynamoStoreOptions {
  /** `<tenant>#<deployment>`, as for the checkpointer. */
  scope: string;
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

  constructor(options: DynamoStoreOptions) {
    super();
    if (!options.scope) throw new Error("DynamoStore needs a scope");
    this.scope = options.scope;
    this.pk = storeKeys.pk(options.scope);
  }

  /** Reads see the state before the batch; puts apply after them, the last put of a key winning (as InMemoryStore). */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const puts = new Map<string, PutOperation>();
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

  private async getOne(op: GetOperation): Promise<Item | null> {
    checkNamespace(op.namespace, op.key);
    const row = await storeItems.get({ scope: this.scope, namespace: op.namespace, key: op.key });
    return row ? toStoreItem(row) : null;
  }

  // Index and TTL options of a put are ignored: there is no vector index, and items do not expire.
  private async putOne(op: PutOperation): Promise<void> {
    const k = { scope: this.scope, namespace: op.namespace, key: op.key };
    if (op.value === null) {
      await storeItems.delete(k);
      return;
    }
    const value = JSON.stringify(op.value);
    if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new PayloadTooLarge(MAX_VALUE_BYTES);
    const now = isoNow();
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName(T),
        Key: toItem(storeItems.key(k)),
        UpdateExpression:
          "SET #value = :value, #namespace = :namespace, #key = :key, updated_at = :now, created_at = if_not_exists(created_at, :now)",
        ExpressionAttributeNames: { "#value": "value", "#namespace": "namespace", "#key": "key" },
        ExpressionAttributeValues: toItem({
          ":value": value,
          ":namespace": op.namespace,
          ":key": op.key,
          ":now": now,
        }),
      }),
    );
  }

  /** Items under a namespace prefix in key order, filtered, then offset and limit applied; stops reading early. */
  private async searchOne(op: SearchOperation): Promise<SearchItem[]> {
    if (op.namespacePrefix.length) checkNamespace(op.namespacePrefix);
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const out: SearchItem[] = [];
    let skipped = 0;
    if (limit <= 0) return out;
    for await (const page of this.range(nsPrefix(op.namespacePrefix))) {
      for (const row of page) {
        const item = toStoreItem(row);
        if (op.filter && !matchesFilter(item.value, op.filter)) continue;
        if (skipped < offset) skipped++;
        else out.push({ ...item, score: undefined });
        if (out.length >= limit) return out;
      }
    }
    return out;
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
      for (const row of page) {
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

  /** One page of items with SK from `from` (inclusive) up to `end` (exclusive), namespaces only. */
  private async rangePage(
    from: string,
    end: string | undefined,
    limit: number,
  ): Promise<Pick<StoreItemRecord, "namespace">[]> {
    const [cond, values] = end
      ? ["SK BETWEEN :from AND :end", { ":from": from, ":end": end }]
      : from
        ? ["SK >= :from", { ":from": from }]
        : [undefined, {}];
    for await (const page of queryPages<Pick<StoreItemRecord, "namespace">>(T, {
      KeyConditionExpression: cond ? `PK = :pk AND ${cond}` : "PK = :pk",
      values: { ":pk": this.pk, ...values },
      ProjectionExpression: "#namespace",
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
