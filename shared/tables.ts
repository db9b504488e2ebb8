import { config } from "./config.ts";

// The table definitions. The CDK data stack and the local cloud both create tables from this list.
export interface IndexDef {
  name: string;
  partitionKey: string;
  sortKey?: string;
  /**
   * The attributes it holds besides the keys (an INCLUDE projection): an update that changes none of them and no
   * key writes nothing to the index. Without it, every attribute (ALL).
   */
  include?: readonly string[];
}
export interface TableDef {
  /** Logical id; the physical name is TABLE_<ID> from the environment, else prefix + id. */
  id: string;
  partitionKey: string;
  sortKey?: string;
  indexes?: IndexDef[];
  ttlAttribute?: string;
  /** The table's DynamoDB stream in AWS (what its TTL consumers read; the local cloud emulates them instead). */
  stream?: "KEYS_ONLY" | "NEW_IMAGE" | "OLD_IMAGE" | "NEW_AND_OLD_IMAGES";
}

export const TABLES = {
  /**
   * Workspaces, API keys, tokens, deployments, destinations, exports, agent threads/runs/assistants: everything
   * keyed PK/SK by tenant. The records and their key layouts: shared/records/*.ts. GSI1 is the platform's
   * lookups; AGENT1 the agent records' own (a runtime writes agent records, and its role may not write GSI1's
   * keys: shared/containment/runtime-policy.ts). Their constant partitions are sharded (shared/records/shard.ts).
   * CloudFormation adds one GSI per update, and changes no index's keys or projection: add a new index alone.
   */
  main: {
    id: "main",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [
      { name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" },
      // The ids its readers check keys against, and a run's status for the metrics; everything else is read
      // from the table (the sweepers read each item anyway), so a lease renewal writes nothing to the index.
      {
        name: "AGENT1",
        partitionKey: "AGENT1PK",
        sortKey: "AGENT1SK",
        include: ["thread_id", "run_id", "cron_id", "status"],
      },
    ],
    ttlAttribute: "expires_at",
  },
  /**
   * Trace runs: the run and its patch record, GSI1 (a project-day's runs, for export), GSI2 (a trace) and GSI3
   * (a thread's runs, a project's threads).
   * Layout: shared/records/runs.ts. TTL: every item of a run expires with its retention tier; the stream's TTL
   * deletes of run items drive the cleanup of their S3 payloads (RunRetentionCleanup).
   */
  runs: {
    id: "runs",
    partitionKey: "PK",
    sortKey: "SK",
    // Each index holds the keys and the id (its readers trust an item by its primary key, and find the run by its
    // id), GSI3 also what a thread list reads of a thread's marker; the readers read the rest from the table
    // (shared/runs/index-read.ts). A run's write is billed again in each index at the size of what it holds there,
    // and an update that changes nothing an index holds (a patch, the derived fields) writes nothing there.
    indexes: [
      { name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK", include: ["id"] },
      { name: "GSI2", partitionKey: "GSI2PK", sortKey: "GSI2SK", include: ["id"] },
      {
        name: "GSI3",
        partitionKey: "GSI3PK",
        sortKey: "GSI3SK",
        include: ["id", "thread_id", "first_start_time", "last_start_time"],
      },
    ],
    ttlAttribute: "expires_at",
    stream: "KEYS_ONLY",
  },
  /**
   * Agent server state: a thread's checkpoints with their pending writes and channel values, and the store.
   * No index (a rollback finds what a run wrote in a consistent read of the thread's partition). Layout:
   * shared/records/agent.ts. TTL: store items put with a ttl (their reads skip them once expired).
   */
  checkpoints: {
    id: "checkpoints",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [],
    ttlAttribute: "expires_at",
  },
} as const satisfies Record<string, TableDef>;

export type TableId = keyof typeof TABLES;

/** An index's projection as DynamoDB's API writes it. */
export const projectionOf = (i: IndexDef) =>
  i.include
    ? { ProjectionType: "INCLUDE" as const, NonKeyAttributes: [...i.include] }
    : { ProjectionType: "ALL" as const };

export function tableName(id: TableId): string {
  return config.tableName(id) ?? `${config.tablePrefix}${id}`;
}

export function tableEnvName(id: TableId): string {
  return `TABLE_${id.toUpperCase()}`;
}
