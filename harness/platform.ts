import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LocalFacts } from "../infra/local/cloud.ts";
import { freePort, startOnFreePorts } from "../infra/local/http-util.ts";
import { resetClients } from "../shared/aws/clients.ts";

// The platform as `npm start` runs it, in its own process group on free ports with a scratch data dir,
// so benchmarks measure the real thing and its memory apart from the load generator.
export interface RunningPlatform {
  facts: LocalFacts;
  base: string;
  readyMs: number;
  child: ChildProcess;
  dataDir: string;
  port: number;
  s3Port: number;
  /** Stops the platform and deletes its data (unless keepData). */
  stop(opts?: { keepData?: boolean }): Promise<void>;
  /** kill -9 of the platform process, as a crash would (with wholeGroup, also its children); the data stays. */
  crash(opts?: { wholeGroup?: boolean }): Promise<void>;
  /** crash(), then the platform again with the same env, args, data dir and ports: what a restart finds. */
  crashAndRestart(opts?: { wholeGroup?: boolean }): Promise<RunningPlatform>;
  /** A clean stop (SIGTERM), then the platform again with the same env, args, data dir and ports. */
  restart(): Promise<RunningPlatform>;
}

/** A start takes ~5 s on a quiet 2-core machine; a busy one (a CI run, a build beside it) can take far longer. */
const START_LIMIT_MS = 90_000;

function stuckReport(pgid: number): string {
  const ps = (args: string[]) => spawnSync("ps", args, { encoding: "utf8" }).stdout?.slice(0, 3000) ?? "";
  let load = "unknown";
  try {
    load = readFileSync("/proc/loadavg", "utf8").trim();
  } catch {}
  return [
    `load average: ${load}`,
    "the platform's processes:",
    ps(["-o", "pid,etime,time,pcpu,stat,args", "-g", String(pgid)]),
    "the busiest processes of the machine:",
    ps(["-eo", "pid,etime,time,pcpu,args", "--sort=-pcpu"]).split("\n").slice(0, 12).join("\n"),
  ].join("\n");
}

/** The platform process exited before it answered (a port it was given taken, a startup error). */
class ExitedAtStart extends Error {}

/**
 * A platform started as `npm start` does. Ports the harness picks itself may be taken by someone else before the
 * platform binds them (the platform then exits): it is started again on other ports, three tries in all.
 */
export async function startPlatform(
  env: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<RunningPlatform> {
  if (opts.port !== undefined || opts.s3Port !== undefined) return startPlatformOnce(env, opts);
  return startOnFreePorts(
    () => startPlatformOnce(env, opts),
    (err) => err instanceof ExitedAtStart,
  );
}

interface StartOptions {
  dataDir?: string;
  port?: number;
  s3Port?: number;
  args?: string[];
  /** Append the platform's stdout and stderr (its runtimes' too) to this file instead (tests grep its logs). */
  logFile?: string;
  /**
   * A DynamoDB already running (the test run's) and the token it answers: the platform keeps its tables there under
   * a prefix of its own, kept across restarts, instead of starting a DynamoDB Local of its own (seconds of JVM start
   * each time).
   */
  sharedDynamoDb?: { endpoint: string; token: string; tablePrefix?: string };
}

async function startPlatformOnce(env: Record<string, string>, given: StartOptions): Promise<RunningPlatform> {
  const opts = given.sharedDynamoDb
    ? {
        ...given,
        sharedDynamoDb: {
          ...given.sharedDynamoDb,
          tablePrefix: given.sharedDynamoDb.tablePrefix ?? tablePrefix(),
        },
      }
    : given;
  const shared = opts.sharedDynamoDb
    ? {
        LOCAL_DYNAMODB_ENDPOINT: opts.sharedDynamoDb.endpoint,
        LOCAL_DYNAMODB_TOKEN: opts.sharedDynamoDb.token,
        TABLE_PREFIX: opts.sharedDynamoDb.tablePrefix!,
      }
    : {};
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "bench-platform-"));
  const port = opts.port ?? (await freePort());
  const s3Port = opts.s3Port ?? (await freePort());
  const t0 = performance.now();
  const log = opts.logFile ? openSync(opts.logFile, "a") : undefined;
  const child = spawn(process.execPath, ["infra/local/launch.mjs", "start", ...(opts.args ?? [])], {
    env: {
      // Load and sweeps drive one workspace far past its rate limit: off unless a caller sets one.
      WORKSPACE_RATE_LIMIT: "0",
      ...process.env,
      PORT: String(port),
      S3_PORT: String(s3Port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      ...env,
      ...shared,
    },
    stdio: log === undefined ? ["ignore", "ignore", "inherit"] : ["ignore", log, log],
    detached: true,
  });
  // The child holds its own copy of the descriptor.
  if (log !== undefined) closeSync(log);
  const base = `http://127.0.0.1:${port}`;
  let readyMs = Number.NaN;
  for (;;) {
    const ok = await fetch(`${base}/ok`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) {
      readyMs = performance.now() - t0;
      break;
    }
    if (child.exitCode != null) {
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
      throw new ExitedAtStart(`the platform exited with ${child.exitCode}`);
    }
    if (performance.now() - t0 > START_LIMIT_MS) {
      // What each process of its group was doing, and how busy the machine was: a slow start says why.
      const report = stuckReport(child.pid!);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
      throw new Error(`the platform did not start within ${START_LIMIT_MS / 1000} s\n${report}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  // local.json is written just before /ok answers; wait for it if the poll won the race.
  let facts: LocalFacts | undefined;
  for (let i = 0; !facts; i++) {
    try {
      facts = JSON.parse(readFileSync(join(dataDir, "local.json"), "utf8"));
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  grantTempFolder(facts!, dataDir);
  const platform: RunningPlatform = {
    facts: facts!,
    base,
    readyMs,
    child,
    dataDir,
    port,
    s3Port,
    async stop({ keepData = false } = {}) {
      if (child.exitCode == null && child.signalCode == null) {
        process.kill(-child.pid!, "SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
    async crash({ wholeGroup = false } = {}) {
      const exited = new Promise((r) => child.once("exit", r));
      process.kill(wholeGroup ? -child.pid! : facts!.pid, "SIGKILL");
      await exited;
      // DynamoDB Local's watchdog notices its parent is gone within half a second and stops it.
      if (!opts.sharedDynamoDb) await new Promise((r) => setTimeout(r, 1500));
    },
    async crashAndRestart(crashOpts) {
      await platform.crash(crashOpts);
      return startPlatform(env, { ...opts, dataDir, port, s3Port });
    },
    async restart() {
      await platform.stop({ keepData: true });
      return startPlatform(env, { ...opts, dataDir, port, s3Port });
    },
  };
  return platform;
}

/**
 * Test and benchmark repositories are made in the temp folder: the harness grants it to the platform's bootstrap
 * workspace as an operator does (npm run grant-folder), in that platform's tables.
 */
function grantTempFolder(facts: LocalFacts, dataDir: string): void {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TABLE_")));
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", "infra/admin/grant-folder.ts", facts.tenant_id, tmpdir()],
    {
      encoding: "utf8",
      env: {
        ...env,
        PLATFORM_LOCAL: "1",
        DATA_DIR: dataDir,
        AWS_ENDPOINT_URL_DYNAMODB: facts.dynamodb_endpoint,
        TABLE_PREFIX: facts.table_prefix,
        AWS_REGION: process.env.AWS_REGION ?? "us-east-1",
        // The endpoint is that platform's policy proxy: its operator's keys.
        AWS_ACCESS_KEY_ID: facts.s3.access_key_id,
        AWS_SECRET_ACCESS_KEY: facts.s3.secret_access_key,
      },
    },
  );
  if (r.status !== 0) throw new Error(`granting the temp folder failed: ${r.stderr || r.stdout}`);
}

const tablePrefix = () => `p${Math.random().toString(36).slice(2, 10)}-`;

/** Resident set size of a process in MB, now and at its peak (Linux /proc). */
export function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

/** Samples a process's RSS every `ms` until stopped; returns the highest sample. */
export function sampleRss(pid: number, ms = 100) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid).rssMb);
    } catch {
      // the process is gone
    }
  }, ms);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssOf(pid).rssMb);
      } catch {}
      return peak;
    },
  };
}

/** Points this process's AWS clients at a started platform's DynamoDB and S3, with its local credentials. */
export function pointAwsAt(facts: LocalFacts): void {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: facts.dynamodb_endpoint,
    AWS_ENDPOINT_URL_S3: facts.s3.endpoint,
    AWS_ACCESS_KEY_ID: facts.s3.access_key_id,
    AWS_SECRET_ACCESS_KEY: facts.s3.secret_access_key,
    AWS_REGION: "us-east-1",
    PLATFORM_BUCKET: facts.s3.bucket,
  });
  resetClients();
}

/** A workspace of its own on the started platform, and a JSON caller with its key (a 3xx+ answer throws). */
export async function benchWorkspace(base: string) {
  // Loaded on use: the other benches importing this module never touch the platform's tables.
  const { ensureTenant, newApiKey, newTenantId, storeApiKey } = await import("../shared/auth/api-keys.ts");
  const tenant = newTenantId();
  const key = newApiKey();
  await ensureTenant(tenant, "bench");
  await storeApiKey(key, [tenant]);
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  return { tenant, call };
}
