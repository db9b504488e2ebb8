import { readFileSync } from "node:fs";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { resetClients } from "../shared/aws/clients.ts";
import { type IsolationResult, isolationSweep, sweepCall } from "./isolation.ts";
import { seedIsolation, type Workspace, type WorkspaceData } from "./isolation-seed.ts";
import type { RunningPlatform } from "./platform.ts";
import { grantTestFolders } from "./repos.ts";

// The whole isolation sweep against a platform of its own (harness/platform.ts startPlatform with a logFile):
// two new workspaces, their data, the sweep, then the platform's log grepped for every secret. The test and
// `npm run bench -- reliability` both call it; `figures` is what a summary prints.
export interface IsolationFigures {
  routes: number;
  requests: number;
  /** Routes × resources tried: requests carrying another owner's ids, weighted by how many they carried. */
  routes_x_resources: number;
  /** Refusals that were not, answers showing another owner's data, secrets in answers or log lines (goal 0). */
  leaks: number;
  statuses: Record<string, number>;
  /** Seconds spent seeding (deployments included) and sweeping. */
  seed_seconds: number;
  sweep_seconds: number;
}

export interface IsolationRun {
  figures: IsolationFigures;
  result: IsolationResult;
  data: [WorkspaceData, WorkspaceData];
  /** Log lines holding a secret. */
  secretLogLines: string[];
  log: string;
  /** Stops the helpers the seed started (the platform stays the caller's). */
  close(): Promise<void>;
}

/** Points this process's DynamoDB client at the platform's tables and makes a workspace with a key there. */
async function workspaceIn(platform: RunningPlatform, name: string): Promise<Workspace> {
  const { facts } = platform;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: facts.dynamodb_endpoint,
    TABLE_PREFIX: facts.table_prefix,
    AWS_ACCESS_KEY_ID: facts.s3.access_key_id,
    AWS_SECRET_ACCESS_KEY: facts.s3.secret_access_key,
    AWS_REGION: "us-east-1",
  });
  resetClients();
  const tenant = newTenantId();
  const apiKey = newApiKey();
  await ensureTenant(tenant, name);
  await storeApiKey(apiKey, [tenant]);
  await grantTestFolders(tenant);
  return { tenant, apiKey, headers: { "X-Api-Key": apiKey, "X-Tenant-Id": tenant } };
}

export async function sweepPlatform(platform: RunningPlatform, logFile: string): Promise<IsolationRun> {
  const workspaces: [Workspace, Workspace] = [
    await workspaceIn(platform, "Isolation A"),
    await workspaceIn(platform, "Isolation B"),
  ];
  const t0 = performance.now();
  const seeded = await seedIsolation(platform.facts, workspaces);
  const { data } = seeded;
  const t1 = performance.now();
  const result = await isolationSweep({ call: sweepCall(platform.base), data });
  const t2 = performance.now();
  const log = readFileSync(logFile, "utf8");
  const secrets = data.flatMap((w) => [...w.secrets, ...w.logOnlySecrets]);
  const secretLogLines = log.split("\n").filter((line) => secrets.some((s) => line.includes(s)));
  const figures: IsolationFigures = {
    routes: result.routes,
    requests: result.requests,
    routes_x_resources: result.tried,
    leaks: result.leaks.length + result.shown.length + result.secrets.length + secretLogLines.length,
    statuses: result.statuses,
    seed_seconds: Math.round((t1 - t0) / 100) / 10,
    sweep_seconds: Math.round((t2 - t1) / 100) / 10,
  };
  return { figures, result, data, secretLogLines, log, close: seeded.close };
}
