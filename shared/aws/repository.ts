import type { PutItemCommandInput } from "@aws-sdk/client-dynamodb";
import { type TableId, tableName } from "../tables.ts";
import {
  type ConditionalUpdate,
  CREATE_ONLY,
  conditionalUpdate,
  deleteItem,
  getItem,
  type Item,
  isConditionFailure,
  type Key,
  putInput,
  putItem,
  type QueryInput,
  queryAll,
  queryPages,
  toItem,
  updateInput,
  updateReturning,
} from "./ddb.ts";

// A repository per kind of record, modelled on the Powertools persistence layer: domain code speaks typed
// records (shared/records/), the repository speaks items. A record kind says which table holds it, the key a
// lookup names, and the key and index attributes stored beside a record's fields; the rest is the same for
// every kind. Conditions, transactions and partition queries stay available through the *Input builders.
// An index's keys are plain attributes that whoever may write an item may set: a read through an index keeps
// only the items whose primary key is the one their kind builds of their fields (`owns`, `indexPages`).

export interface RecordKind<R extends object, K> {
  table: TableId;
  /** The primary key of the record `k` names. */
  key(k: K): Key;
  /** The primary key and index attributes stored with a record (derived from its fields). */
  keysOf(r: R): Key & Record<string, string>;
}

type PutExtra = Omit<PutItemCommandInput, "TableName" | "Item">;

export interface Repository<R extends object, K> {
  readonly table: TableId;
  key(k: K): Key;
  /** The stored item of a record: its keys beside its fields, undefined fields left out. */
  item(r: R): Item;
  get(k: K, consistent?: boolean): Promise<R | undefined>;
  put(r: R, extra?: PutExtra): Promise<void>;
  /** Puts the record unless one with its key exists; false when it does. */
  create(r: R): Promise<boolean>;
  /** The Put of a transaction (`CREATE_ONLY` and the like in `extra`). */
  putInput(r: R, extra?: PutExtra): ReturnType<typeof putInput>;
  /** A conditional update of an existing record; false when a condition did not hold. */
  update(k: K, u: ConditionalUpdate): Promise<boolean>;
  /** `update` answering with the record as written; undefined when a condition did not hold. */
  updateReturning(k: K, u: ConditionalUpdate): Promise<R | undefined>;
  /** The Update of a transaction. */
  updateInput(k: K, u: ConditionalUpdate): ReturnType<typeof updateInput>;
  delete(k: K): Promise<void>;
  /** The Delete of a transaction. */
  deleteInput(k: K): { TableName: string; Key: ReturnType<typeof toItem> };
  /** Every record of one partition, in sort-key order (`prefix`: of the sort keys starting with it). */
  list(pk: string, opts?: PartitionQuery): Promise<R[]>;
  /** The records of one partition page by page; the caller may stop early. */
  pages(pk: string, opts?: PartitionQuery & { limit?: PageLimit }): AsyncGenerator<R[]>;
  /** Whether an item is a record of this kind: its PK and SK are those its own fields build. */
  owns(item: Item): item is R;
  /** An index query page by page, keeping only the records of this kind (`owns`); the caller may stop early. */
  indexPages(input: QueryInput): AsyncGenerator<R[]>;
}

export interface PartitionQuery {
  prefix?: string;
  consistent?: boolean;
  newestFirst?: boolean;
}

/** A page size, or a function asked before each page (read no more than is still wanted). */
type PageLimit = number | (() => number);

const defined = (r: object) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined));

function partitionQuery(pk: string, opts: PartitionQuery & { limit?: PageLimit } = {}) {
  return {
    KeyConditionExpression: opts.prefix ? "PK = :pk AND begins_with(SK, :prefix)" : "PK = :pk",
    values: opts.prefix ? { ":pk": pk, ":prefix": opts.prefix } : { ":pk": pk },
    ConsistentRead: opts.consistent,
    ScanIndexForward: opts.newestFirst ? false : undefined,
    Limit: opts.limit,
  };
}

export function repository<R extends object, K>(kind: RecordKind<R, K>): Repository<R, K> {
  const { table } = kind;
  const item = (r: R): Item => ({ ...kind.keysOf(r), ...defined(r) });
  const owns = (i: Item): i is R => {
    try {
      const k = kind.keysOf(i as R);
      return typeof i.PK === "string" && i.PK === k.PK && i.SK === k.SK;
    } catch {
      return false; // fields its kind's keys cannot be built of
    }
  };
  return {
    table,
    key: kind.key,
    item,
    get: (k, consistent = true) => getItem<R>(table, kind.key(k), consistent),
    put: (r, extra) => putItem(table, item(r), extra),
    async create(r) {
      try {
        await putItem(table, item(r), CREATE_ONLY);
        return true;
      } catch (err) {
        if (isConditionFailure(err)) return false;
        throw err;
      }
    },
    putInput: (r, extra) => putInput(table, item(r), extra),
    update: (k, u) => conditionalUpdate(table, kind.key(k), u),
    updateReturning: (k, u) => updateReturning<R>(table, kind.key(k), u),
    updateInput: (k, u) => updateInput(table, kind.key(k), u),
    delete: (k) => deleteItem(table, kind.key(k)),
    deleteInput: (k) => ({ TableName: tableName(table), Key: toItem(kind.key(k)) }),
    list: (pk, opts) => queryAll<R>(table, partitionQuery(pk, opts)),
    pages: (pk, opts) => queryPages<R>(table, partitionQuery(pk, opts)),
    owns,
    async *indexPages(input) {
      for await (const page of queryPages<Item>(table, input)) yield page.filter(owns);
    },
  };
}
