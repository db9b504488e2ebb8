import { rmSync } from "node:fs";
import { processCustomerS3 } from "../../harness/customer-s3.ts";
import {
  download,
  duck,
  exportSource,
  FINAL_STATUSES,
  type platformApi,
  s3For,
  waitFor,
} from "../../harness/export.ts";
import type { RunningPlatform } from "../../harness/platform.ts";
import { check } from "./summary.ts";

// Bulk exports as the reliability scenarios drive them: a destination per trial (its own prefix), an export of
// the source project's days, its end, and its rows read back from the Parquet files with DuckDB.
type Api = ReturnType<typeof platformApi>;

export const EXPORT_ENV = {
  // 25-run pages, a file per page: many S3 calls and checkpoints per export, so faults and kills land mid-way.
  EXPORT_PAGE_SIZE: "25",
  EXPORT_FILE_BYTES: "1",
  LOCAL_SFN_RETRY_INTERVAL_MS: "100",
  LOG_LEVEL: "error",
};

/**
 * The runs exports read: 2 days × 100 from `firstDay` ingested into the project `name`, a bucket of that name
 * in the workspace's own S3 (harness/customer-s3.ts; destinations at `endpoint`: it, or a proxy in front of it),
 * and the ids sent.
 */
export async function exportSourceOf(p: RunningPlatform, name: string, firstDay: string, endpoint: string) {
  const made = await exportSource(
    p,
    { project: name, firstDay, days: 2, perDay: 100, bucket: name, endpoint },
    await processCustomerS3(),
  );
  return { project: made.project, bucket: name, sent: new Set(made.sent.map((r) => r.id as string)) };
}
export type ExportSource = Awaited<ReturnType<typeof exportSourceOf>>;

export async function newDestination(
  api: Api,
  bucket: string,
  prefix: string,
  endpoint: string,
): Promise<string> {
  const { s3 } = await processCustomerS3();
  const dest = await api("POST", "/api/v1/bulk-exports/destinations", {
    destination_type: "s3",
    display_name: prefix,
    config: { bucket_name: bucket, prefix, endpoint_url: endpoint },
    credentials: { access_key_id: s3.access_key_id, secret_access_key: s3.secret_access_key },
  });
  check(dest.status === 200, `destination: ${dest.status} ${JSON.stringify(dest.json)}`);
  return dest.json.id;
}

export async function startExport(api: Api, destination: string, project: string, from: string, to: string) {
  const created = await api("POST", "/api/v1/bulk-exports", {
    bulk_export_destination_id: destination,
    session_id: project,
    start_time: from,
    end_time: to,
  });
  check(created.status === 200, `create export: ${created.status} ${JSON.stringify(created.json)}`);
  return created.json.id as string;
}

/** The export once it ended, and what its runs recorded: retries taken and errors kept. */
export async function exportEnd(api: () => Api, id: string, timeoutMs = 180_000, onEnded = () => {}) {
  const done = await waitFor(
    "the export to end",
    async () => {
      const r = await api()("GET", `/api/v1/bulk-exports/${id}`);
      return FINAL_STATUSES.includes(r.json.status) ? r.json : undefined;
    },
    timeoutMs,
    250,
  ).finally(onEnded);
  const runs = (await api()("GET", `/api/v1/bulk-exports/${id}/runs`)).json as {
    retry_number: number;
    errors: Record<string, string>;
    metadata: { result: { rows_written: number } };
  }[];
  return {
    status: done.status as string,
    retries: runs.reduce((n, r) => n + (r.retry_number ?? 0), 0),
    errors: runs.flatMap((r) => Object.values(r.errors ?? {})),
    rowsWritten: runs.reduce((n, r) => n + (r.metadata?.result?.rows_written ?? 0), 0),
  };
}

/** Checks the Parquet files under `prefix` hold every sent id exactly once; the number of rows. */
export async function checkExportedRows(bucket: string, prefix: string, sent: Set<string>): Promise<number> {
  const { dir } = await download(s3For(await processCustomerS3()), bucket, `${prefix}/`);
  try {
    const rows = await duck(
      `SELECT id FROM read_parquet('${dir}/${prefix}/**/*.parquet', hive_partitioning=true)`,
    );
    const ids = new Set(rows.map((r) => String(r.id)));
    check(ids.size === rows.length, `${rows.length - ids.size} rows exported twice`);
    check(rows.length === sent.size, `${rows.length} rows exported of ${sent.size}`);
    check(
      [...sent].every((id) => ids.has(id)),
      "source rows missing from the files",
    );
    return rows.length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A one-graph repository (`agent`) whose nodes run in order, each sleeping its ms, each adding its name to `items`. */
export function sleepyGraphFiles(nodes: Record<string, number>): Record<string, string> {
  const names = Object.keys(nodes);
  const add = names.map(
    (n) =>
      `.addNode(${JSON.stringify(n)}, async () => { await sleep(${nodes[n]}); return { items: [${JSON.stringify(n)}] }; })`,
  );
  const edges = ["START", ...names.map((n) => JSON.stringify(n)), "END"];
  return {
    "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" }, env: {} }),
    "src/graph.mjs": [
      `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
      "const sleep = (ms) => new Promise((r) => setTimeout(r, ms));",
      "const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });",
      `export const graph = new StateGraph(State)${add.join("")}${edges
        .slice(1)
        .map((to, i) => `.addEdge(${edges[i]}, ${to})`)
        .join("")}.compile();`,
      "",
    ].join("\n"),
  };
}
