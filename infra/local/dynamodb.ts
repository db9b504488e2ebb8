import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  type Projection,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { tolerateStdioErrors } from "../../shared/build/exec.ts";
import { processEnvironment } from "../../shared/config.ts";
import { projectionOf, TABLES, type TableDef, tableName } from "../../shared/tables.ts";
import { type Backend, withBackendToken } from "./backend-token.ts";
import { LAUNCHER_CLASS, launcherClassDir } from "./dynamodb-launcher.ts";
// @ts-expect-error plain ESM helper without types
import { ensureDynamoDbLocal } from "./ensure-deps.mjs";
import { StartupError } from "./http-util.ts";

// AWS's DynamoDB Local on the machine's Java, in its own process group. A shell watchdog ends it
// within a second of this process dying, however it dies, so no Java process outlives the platform.
export interface LocalDynamo {
  endpoint: string;
  stop(): Promise<void>;
}

function checkJava(): void {
  const r = spawnSync("java", ["-version"], { stdio: "ignore" });
  if (r.error || r.status !== 0) {
    throw new StartupError(
      "Java 17+ is needed for DynamoDB Local and was not found: install a JRE (e.g. `apt-get install -y openjdk-17-jre-headless`) and run again.",
    );
  }
}

/** The only address the local cloud's own services (DynamoDB Local, S3, the AWS emulator, runtimes) listen on. */
export const LOOPBACK = "127.0.0.1";

/**
 * DynamoDB Local could not listen on its port (taken between the free-port probe and its bind, e.g. by an
 * outgoing connection's ephemeral port). Its JVM does not exit then: the failure is read from its output.
 */
export class DynamoPortInUse extends StartupError {
  constructor(readonly port: number) {
    super(`Port ${port} (DynamoDB Local) is in use: stop what holds it or choose a free port.`);
  }
}
const BIND_FAILURE = /BindException|Failed to bind/;

/**
 * A client straight to a DynamoDB Local, with its token: for what started it (its readiness probe, a benchmark's
 * reference); everyone else goes through the policy proxy.
 */
export function dynamoDbLocalClient(backend: Backend): DynamoDBClient {
  return withBackendToken(
    new DynamoDBClient({
      endpoint: backend.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    }),
    backend.token,
  );
}

/** DynamoDB Local on `port`, answering only requests that carry `token` (backend-token.ts). */
export async function startDynamoDb(opts: {
  port: number;
  dataDir?: string;
  token: string;
}): Promise<LocalDynamo> {
  checkJava();
  const dir: string = ensureDynamoDbLocal();
  const storage = opts.dataDir ? ["-dbPath", opts.dataDir] : ["-inMemory"];
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const java = [
    "java",
    // One small JVM beside the platform on a laptop: the serial collector costs the least CPU per request.
    "-XX:+UseSerialGC",
    `-Djava.library.path=${join(dir, "DynamoDBLocal_lib")}`,
    // Listening on loopback only, whatever the platform's HOST: its data is nobody else's to reach.
    `-Dplatform.bindHost=${LOOPBACK}`,
    "-cp",
    [join(dir, "DynamoDBLocal.jar"), join(dir, "DynamoDBLocal_lib", "*"), launcherClassDir(dir)].join(
      delimiter,
    ),
    LAUNCHER_CLASS,
    "-sharedDb",
    // No telemetry to AWS (its documented switch; the environment's DDB_LOCAL_TELEMETRY=0 below also keeps it from
    // writing an install id to dynamodb-local-metadata.json in the working folder).
    "-disableTelemetry",
    "-port",
    String(opts.port),
    ...storage,
  ];
  const quoted = java.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  // Its stdin (the token's line) stays its own: a background job's is /dev/null unless redirected.
  const script = `${quoted} <&0 & J=$!; trap 'kill $J 2>/dev/null; wait $J; exit 0' TERM INT HUP; while kill -0 ${process.pid} 2>/dev/null && kill -0 $J 2>/dev/null; do sleep 0.5; done; kill $J 2>/dev/null; wait $J`;
  const child: ChildProcess = spawn("bash", ["-c", script], {
    env: { ...processEnvironment(), DDB_LOCAL_TELEMETRY: "0" },
    detached: true,
    stdio: ["pipe", "ignore", "pipe"],
  });
  tolerateStdioErrors(child);
  child.stdin?.end(`${opts.token}\n`);
  const exited = new Promise((r) => child.once("exit", r));
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {}
  };
  process.once("exit", killGroup);
  const endpoint = `http://${LOOPBACK}:${opts.port}`;
  const client = dynamoDbLocalClient({ endpoint, token: opts.token });
  const deadline = Date.now() + 60_000;
  /** Stops the JVM (and waits up to 5 s for it: a retry may open the same files) before failing the start. */
  const fail = async (err: Error): Promise<never> => {
    process.off("exit", killGroup);
    killGroup();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    client.destroy();
    throw err;
  };
  for (;;) {
    if (child.exitCode !== null)
      throw new StartupError(`DynamoDB Local exited: ${stderr.trim().split("\n").pop() ?? "no output"}`);
    if (BIND_FAILURE.test(stderr)) await fail(new DynamoPortInUse(opts.port));
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) {
        const last = stderr.trim().split("\n").slice(-3).join(" | ");
        await fail(new StartupError(`DynamoDB Local did not answer within 60 s${last ? `: ${last}` : ""}`));
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  return {
    endpoint,
    stop: async () => {
      process.off("exit", killGroup);
      if (child.exitCode !== null) return;
      killGroup();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    },
  };
}

/**
 * Creates every table of shared/tables.ts that does not exist yet, and adds the indexes a table of an earlier
 * version lacks (idempotent). DynamoDB Local enforces TTL
 * itself (expired items go within seconds, REMOVE stream records by "dynamodb.amazonaws.com"), except on the
 * tables in `ttlEmulated`: their TTL is infra/local/ttl.ts's, which tells the consumers of those deletes, so
 * DynamoDB Local's is left off (and turned off on a table an earlier version created with it).
 */
export async function createTables(
  client: DynamoDBClient,
  ttlEmulated: ReadonlySet<string> = new Set(),
): Promise<void> {
  const existing = new Set((await client.send(new ListTablesCommand({}))).TableNames ?? []);
  for (const def of Object.values(TABLES) as TableDef[]) {
    const name = tableName(def.id as keyof typeof TABLES);
    const ttlAttribute = ttlEmulated.has(def.id) ? undefined : def.ttlAttribute;
    if (existing.has(name)) {
      if (ttlEmulated.has(def.id)) await disableTtl(client, name);
      await addMissingIndexes(client, name, def);
      continue;
    }
    const attrs = new Set([
      def.partitionKey,
      def.sortKey,
      ...(def.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey]),
    ]);
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [...attrs]
          .filter((a): a is string => !!a)
          .map((a) => ({ AttributeName: a, AttributeType: "S" })),
        KeySchema: keySchema(def.partitionKey, def.sortKey),
        GlobalSecondaryIndexes: def.indexes?.length
          ? def.indexes.map((i) => ({
              IndexName: i.name,
              KeySchema: keySchema(i.partitionKey, i.sortKey),
              Projection: projectionOf(i),
            }))
          : undefined,
      }),
    );
    if (ttlAttribute) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
        }),
      );
    }
  }
}

const keySchema = (pk: string, sk?: string) => [
  { AttributeName: pk, KeyType: "HASH" as const },
  ...(sk ? [{ AttributeName: sk, KeyType: "RANGE" as const }] : []),
];

/**
 * Adds the indexes of `def` a table made by an earlier version lacks, one at a time (as AWS requires), and
 * replaces one whose projection is not `def`'s (a projection cannot be changed in place: the index is deleted
 * and created again, which fills it from the table). Before anything reads the data: the index is missing
 * meanwhile.
 */
async function addMissingIndexes(client: DynamoDBClient, name: string, def: TableDef): Promise<void> {
  const table = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  const have = new Map((table?.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.Projection]));
  for (const i of def.indexes ?? []) {
    if (have.has(i.name)) {
      if (sameProjection(have.get(i.name), projectionOf(i))) continue;
      await whileInUse(() =>
        client.send(
          new UpdateTableCommand({
            TableName: name,
            GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: i.name } }],
          }),
        ),
      );
      await untilIndex(client, name, i.name, (status) => status === undefined);
    }
    await whileInUse(() =>
      client.send(
        new UpdateTableCommand({
          TableName: name,
          AttributeDefinitions: [i.partitionKey, i.sortKey]
            .filter((a): a is string => !!a)
            .map((a) => ({ AttributeName: a, AttributeType: "S" })),
          GlobalSecondaryIndexUpdates: [
            {
              Create: {
                IndexName: i.name,
                KeySchema: keySchema(i.partitionKey, i.sortKey),
                Projection: projectionOf(i),
              },
            },
          ],
        }),
      ),
    );
    // Writes while DynamoDB Local backfills a new index can fail (InternalFailure): wait until it is ACTIVE.
    await untilIndex(client, name, i.name, (status) => status === "ACTIVE" || status === undefined);
  }
}

/**
 * An index change tried again while the table answers ResourceInUseException: DynamoDB Local may still report an
 * index it no longer lists as being deleted (seen under load), as AWS refuses a change while another is under way.
 */
async function whileInUse<T>(change: () => Promise<T>, deadline = Date.now() + 120_000): Promise<T> {
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await change();
    } catch (err) {
      if ((err as { name?: string }).name !== "ResourceInUseException" || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** Whether an index's projection is `want` (the included attributes in any order). */
function sameProjection(have: Projection | undefined, want: Projection): boolean {
  const attrs = (p?: Projection) => [...(p?.NonKeyAttributes ?? [])].sort().join("\n");
  return have?.ProjectionType === want.ProjectionType && attrs(have) === attrs(want);
}

/** Waits (up to a minute) until the index's status (undefined: there is none) is as `done` wants. */
async function untilIndex(
  client: DynamoDBClient,
  name: string,
  index: string,
  done: (status: string | undefined) => boolean,
): Promise<void> {
  for (let waited = 0; waited <= 60_000; waited += 100) {
    const t = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
    if (done(t?.GlobalSecondaryIndexes?.find((g) => g.IndexName === index)?.IndexStatus)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function disableTtl(client: DynamoDBClient, name: string): Promise<void> {
  const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription;
  if (ttl?.TimeToLiveStatus !== "ENABLED" || !ttl.AttributeName) return;
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: false },
    }),
  );
}
