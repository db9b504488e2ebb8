import { config } from "./config.ts";

// The table definitions. The CDK data stack and the local cloud both create tables from this list.
export interface IndexDef {
  name: string;
  partitionKey: string;
  sortKey?: string;
}
export interface TableDef {
  /** Logical id; the physical name is TABLE_<ID> from the environment, else prefix + id. */
  id: string;
  partitionKey: string;
  sortKey?: string;
  indexes?: IndexDef[];
  ttlAttribute?: string;
}

export const TABLES = {
  /** Workspaces, API keys, tokens, deployments, destinations, exports: everything keyed PK/SK by tenant. */
  main: {
    id: "main",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [{ name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" }],
    ttlAttribute: "expires_at",
  },
  /**
   * Trace runs. Base key: PK `<tenant>#<run_id>`, SK `run` (the merged run) or `patch` (the durable record of
   * patches, re-applied if a post lands after them). GSI1 partitions runs for export: `<tenant>#<session>#<UTC
   * day>#<shard>` sorted by `<start_time>#<run_id>`, so an export run is a paginated Query. GSI2 groups a trace.
   */
  runs: {
    id: "runs",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [
      { name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" },
      { name: "GSI2", partitionKey: "GSI2PK", sortKey: "GSI2SK" },
    ],
  },
  /**
   * Agent server state (shared/agent). A thread is one partition, PK `<scope>#T#<thread>`: SK `C#<ns>#<id>` a
   * checkpoint, `C#<ns>#<id>#W#<task>#<idx>` its pending writes, `C#<ns>#<id>#V#<channel>` the channel values it
   * wrote. Store items: PK `<scope>#STORE`, SK `<label>:…<label>:.<key>`. No index: a rollback finds what a run
   * wrote by its checkpoints' `run_id` in a consistent read of the thread's partition.
   */
  checkpoints: {
    id: "checkpoints",
    partitionKey: "PK",
    sortKey: "SK",
    indexes: [],
  },
} as const satisfies Record<string, TableDef>;

export type TableId = keyof typeof TABLES;

export function tableName(id: TableId): string {
  return config.tableName(id) ?? `${config.tablePrefix}${id}`;
}

export function tableEnvName(id: TableId): string {
  return `TABLE_${id.toUpperCase()}`;
}
