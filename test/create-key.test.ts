import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, inject, it } from "vitest";
import { callAt } from "../harness/http.ts";
import { tableName } from "../shared/tables.ts";
import { base } from "./helpers/cloud.ts";

// Issue 26 (finding 3): `npm run create-key` wrote to us-east-1 whatever region `cdk deploy` used. It must take
// the region as the SDK resolves it (AWS_REGION, else the profile's), and say where it wrote.
const dir = mkdtempSync(join(tmpdir(), "create-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("create-key signs for the profile's region when AWS_REGION is unset (the local cloud, one region, refuses it naming that region)", async () => {
  const configFile = join(dir, "config");
  writeFileSync(configFile, "[default]\nregion = eu-west-3\n");
  const env: Record<string, string> = { ...inject("env"), AWS_CONFIG_FILE: configFile };
  for (const k of ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"]) delete env[k];
  // The local cloud's AWS endpoint is the policy proxy of one region (as an AWS endpoint is): a call signed for
  // the profile's region reaches it and is refused, naming the region the script resolved.
  const run = promisify(execFile)(process.execPath, ["--import", "tsx", "infra/admin/create-api-key.ts"], {
    env,
    cwd: process.cwd(),
  });
  await expect(run).rejects.toMatchObject({ stderr: expect.stringContaining("not eu-west-3") });
});

it("create-key writes in the local cloud's region and prints the region and table; the key is usable at once", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "infra/admin/create-api-key.ts"],
    { env: { ...inject("env") }, cwd: process.cwd() },
  );
  const out = JSON.parse(stdout);
  expect(out.region).toBe(inject("env").AWS_REGION);
  expect(out.table).toBe(tableName("main"));
  const res = await callAt(base)("GET", "/v2/deployments", {
    headers: { "X-Api-Key": out.api_key, "X-Tenant-Id": out.tenant_id },
  });
  expect(res.status).toBe(200);
});
