import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { agentClient, deployedClient } from "../harness/agents.ts";
import { gitRepo, grantTestFolders } from "../harness/repos.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { call, facts } from "./helpers/cloud.ts";

// Issue 13: a deployment's code runs in its own runtime, never in a platform process, and cannot reach another
// deployment. A hostile graph, deployed beside a normal one (and a normal one in another workspace), tries at
// import time and inside a node to (a) read secrets and platform credentials from its environment, (c) write
// into the other deployment's files, read the platform's files, start processes, and (d) patch globals and
// prototypes. (b), reading another deployment's data with the runtime's credentials, is proven on the runtime's
// IAM policy in AWS (infra): DynamoDB Local enforces no IAM, so locally the runtime simply holds none of the
// platform's credentials.
const SECRET_A = `secret-a-${crypto.randomUUID()}`;
const SECRET_B = `secret-b-${crypto.randomUUID()}`;
const SECRET_C = `secret-c-${crypto.randomUUID()}`;
const ARTIFACTS = join(tmpdir(), "agent-platform-artifacts");
const TOKEN_OF_NORMAL = `token-${crypto.randomUUID()}`;

const NORMAL = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ seen: Annotation() });
export const graph = new StateGraph(State)
  .addNode("look", () => ({ seen: {
    pid: process.pid,
    secret: process.env.MY_SECRET ?? null,
    objectMarker: ({}).hostile_marker ?? null,
    globalMarker: globalThis.hostile_marker ?? null,
    randomPatched: Math.random() === 0.42,
  } }))
  .addEdge(START, "look").compile();
`;

// Every attempt is recorded, never thrown, so the graph loads and answers whatever is refused.
const HOSTILE = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import * as fs from "node:fs";
import * as http from "node:http";
import { execSync } from "node:child_process";
const attempt = (fn) => { try { return { ok: true, value: fn() }; } catch (e) { return { ok: false, error: String(e?.code ?? e) }; } };
function breakOut(where) {
  const targets = JSON.parse(process.env.TARGETS);
  return {
    where,
    pid: process.pid,
    ppid: process.ppid,
    env: { ...process.env },
    writeOther: attempt(() => fs.writeFileSync(targets.otherArtifact + "/manifest.json", "{}")),
    dropOther: attempt(() => fs.writeFileSync(targets.otherArtifact + "/evil.mjs", "export const x = 1")),
    readOther: attempt(() => fs.readFileSync(targets.otherArtifact + "/manifest.json", "utf8")),
    readPlatformKey: attempt(() => fs.readFileSync(targets.credentials, "utf8")),
    readRuntimeToken: attempt(() => fs.readFileSync(targets.runtimeDescription, "utf8")),
    listBundleFolder: attempt(() => fs.readdirSync(targets.runtimeDir)),
    readParentEnv: attempt(() => fs.readFileSync("/proc/" + targets.platformPid + "/environ", "utf8")),
    listArtifacts: attempt(() => fs.readdirSync(targets.artifacts)),
    procs: attempt(() => fs.readdirSync("/proc").filter((n) => /^d+$/.test(n)).map(Number)).value,
    signalPlatform: attempt(() => process.kill(targets.platformPid, 0)),
    spawn: attempt(() => execSync("id").toString()),
  };
}
const atImport = breakOut("import");
// Every request its runtime takes, as the runtime's own HTTP server sees it.
const seenHeaders = [];
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, ...rest) {
  if (event === "request") seenHeaders.push({ ...req.headers });
  return emit.call(this, event, req, ...rest);
};
// Patched for everyone in this process: prototypes and globals.
Object.defineProperty(Object.prototype, "hostile_marker", { value: "patched", writable: true, configurable: true });
globalThis.hostile_marker = "patched";
Math.random = () => 0.42;
const State = Annotation.Root({ report: Annotation() });
export const graph = new StateGraph(State)
  .addNode("attack", () => ({ report: { atImport, inNode: breakOut("node"), seenHeaders } }))
  .addEdge(START, "attack").compile();
`;

const repo = (graph: string) =>
  gitRepo({
    "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" }, env: { GRAPH_ENV: "1" } }),
    "src/graph.mjs": graph,
  });

const repos = { normal: repo(NORMAL), hostile: repo(HOSTILE), other: repo(NORMAL) };
let normal: { deploymentId: string; client: Client };
let hostile: { deploymentId: string; client: Client };
let other: { deploymentId: string; client: Client };
let otherFacts: typeof facts;

/** The folder a deployment's revision artifact was materialized into (the runtime imports it from there). */
const artifactOf = (deploymentId: string) => {
  const dir = readdirSync(ARTIFACTS).find((d) => d.includes(deploymentId) && !d.includes("."));
  if (!dir) throw new Error(`no artifact folder for ${deploymentId}`);
  return join(ARTIFACTS, dir);
};

async function runOnce(client: Client): Promise<any> {
  const t = await client.threads.create();
  return client.runs.wait(t.thread_id, "agent", { input: {} });
}

beforeAll(async () => {
  // A second workspace with its own key.
  const tenant = newTenantId();
  const key = newApiKey();
  await ensureTenant(tenant, "Other workspace");
  await storeApiKey(key, [tenant]);
  await grantTestFolders(tenant);
  otherFacts = { ...facts, tenant_id: tenant, api_key: key };
  normal = await deployedClient(facts, repos.normal.dir, "iso-normal", [
    { name: "MY_SECRET", value: SECRET_A },
  ]);
  other = await deployedClient(otherFacts, repos.other.dir, "iso-other", [
    { name: "MY_SECRET", value: SECRET_C },
  ]);
  // The normal deployment has served a run (its runtime is up) before the hostile one arrives.
  await runOnce(normal.client);
  // With PLATFORM_COUNT_REQUESTS=1 the platform describes each runtime (its socket and token) beside the runtime
  // bundle: one as it would be written there for the normal deployment.
  const runtimeDir = join(inject("dataDir"), "runtime");
  const runtimeDescription = join(runtimeDir, `${normal.deploymentId}.json`);
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
  writeFileSync(runtimeDescription, JSON.stringify({ token: TOKEN_OF_NORMAL }), { mode: 0o600 });
  const targets = {
    otherArtifact: artifactOf(normal.deploymentId),
    artifacts: ARTIFACTS,
    credentials: join(inject("dataDir"), "credentials.json"),
    runtimeDescription,
    runtimeDir,
    platformPid: facts.pid,
  };
  hostile = await deployedClient(facts, repos.hostile.dir, "iso-hostile", [
    { name: "MY_SECRET", value: SECRET_B },
    { name: "TARGETS", value: JSON.stringify(targets) },
  ]);
}, 240_000);

afterAll(() => {
  for (const r of Object.values(repos)) r.remove();
  rmSync(join(inject("dataDir"), "runtime", `${normal?.deploymentId}.json`), { force: true });
});

describe("a deployment's code runs in its own runtime", () => {
  let report: { atImport: any; inNode: any; seenHeaders: Record<string, string>[] };
  beforeAll(async () => {
    report = ((await runOnce(hostile.client)) as { report: typeof report }).report;
  }, 120_000);

  it("runs in a process namespace of its own: it sees no process of the platform or another deployment, and cannot signal the platform", () => {
    for (const r of [report.atImport, report.inNode]) {
      expect(r.pid).not.toBe(facts.pid);
      expect(r.ppid).not.toBe(facts.pid);
      // Its pid namespace: the sandbox's init and itself.
      expect(r.procs.length).toBeLessThanOrEqual(2);
      expect(r.procs).not.toContain(facts.pid);
      expect(r.signalPlatform).toMatchObject({ ok: false, error: "ESRCH" });
    }
  });

  it("(a) its environment holds its own secrets and langgraph.json env only: no other deployment's, no platform credential", () => {
    for (const { env } of [report.atImport, report.inNode]) {
      expect(env.MY_SECRET).toBe(SECRET_B);
      expect(env.GRAPH_ENV).toBe("1");
      const all = JSON.stringify(env);
      for (const foreign of [SECRET_A, SECRET_C, facts.api_key, otherFacts.api_key])
        expect(all).not.toContain(foreign);
      // The platform's own credentials and control settings are not there.
      expect(env.AWS_ACCESS_KEY_ID).not.toBe(process.env.AWS_ACCESS_KEY_ID);
      expect(env.AWS_SECRET_ACCESS_KEY).not.toBe(process.env.AWS_SECRET_ACCESS_KEY);
      for (const name of [
        "PLATFORM_API_KEY",
        "PLATFORM_TENANT_ID",
        "KMS_KEY_ID",
        "TASK_ARN_PREFIX",
        "DATA_DIR",
      ])
        expect(env[name]).toBeUndefined();
      for (const name of Object.keys(env)) {
        expect(name).not.toMatch(/^(AWS_ENDPOINT_URL_(KMS|SFN|LAMBDA|SCHEDULER)|STATE_MACHINE_)/);
      }
    }
  });

  it("(c) cannot write into the other deployment's files, read them, read the platform's, or start a process", () => {
    for (const r of [report.atImport, report.inNode]) {
      // Not there at all in its sandbox (ENOENT), or refused by Node's permission model inside it.
      for (const a of ["writeOther", "dropOther", "readOther", "readPlatformKey", "readParentEnv"])
        expect(["ENOENT", "ERR_ACCESS_DENIED"], a).toContain(r[a].error);
      expect(r.spawn.ok).toBe(false);
      // The artifacts folder holds, in its sandbox, its own revision's artifact only.
      const listed: string[] = r.listArtifacts.ok ? r.listArtifacts.value : [];
      expect(listed.every((name) => name.includes(hostile.deploymentId))).toBe(true);
    }
    const dir = artifactOf(normal.deploymentId);
    expect(existsSync(join(dir, "evil.mjs"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).graphs.agent).toBeDefined();
  });

  it("sees no runtime's token file: beside its bundle there is the bundle only (PLATFORM_COUNT_REQUESTS)", () => {
    for (const r of [report.atImport, report.inNode]) {
      expect(["ENOENT", "ERR_ACCESS_DENIED"]).toContain(r.readRuntimeToken.error);
      const listed: string[] = r.listBundleFolder.ok ? r.listBundleFolder.value : [];
      expect(listed.filter((name) => name.endsWith(".json"))).toEqual([]);
      expect(JSON.stringify(r)).not.toContain(TOKEN_OF_NORMAL);
    }
  });

  it("the artifact folders (deployments' code) and the platform's data folder are the platform user's alone (0700)", () => {
    for (const dir of [artifactOf(normal.deploymentId), artifactOf(hostile.deploymentId), inject("dataDir")])
      expect((statSync(dir).mode & 0o777).toString(8), dir).toBe("700");
    // The folder holding the artifacts: others may pass through it to their own artifact (a root platform's
    // sandboxes, each a uid of its own), never list or write it.
    expect((statSync(ARTIFACTS).mode & 0o776).toString(8), ARTIFACTS).toBe("700");
  });

  it("(d) its patched globals and prototypes do not reach the other deployment's runs", async () => {
    const seen = ((await runOnce(normal.client)) as { seen: Record<string, unknown> }).seen;
    expect(seen).toMatchObject({
      secret: SECRET_A,
      objectMarker: null,
      globalMarker: null,
      randomPatched: false,
    });
    const theirs = ((await runOnce(other.client)) as { seen: Record<string, unknown> }).seen;
    expect(theirs).toMatchObject({ secret: SECRET_C, objectMarker: null, globalMarker: null });
  });

  it("never sees the API key a request was made with", () => {
    expect(report.seenHeaders.length).toBeGreaterThan(0);
    const all = JSON.stringify(report.seenHeaders);
    expect(all).not.toContain(facts.api_key);
    for (const h of report.seenHeaders) expect(h["x-api-key"]).toBeUndefined();
  });

  it("a deployment is reached only with its own workspace's key", async () => {
    const foreign = agentClient(otherFacts, hostile.deploymentId);
    await expect(foreign.threads.create()).rejects.toThrow(/404/);
    const r = await call("POST", `/agents/${normal.deploymentId}/threads`, { body: {} });
    expect(r.status).toBe(401);
  });
});

describe("reserved names", () => {
  it("a secret may not set a platform setting: 422 naming the field", async () => {
    const headers = { "X-Api-Key": facts.api_key, "X-Tenant-Id": facts.tenant_id };
    for (const name of [
      "PLATFORM_LOCAL",
      "AWS_ACCESS_KEY_ID",
      "NODE_OPTIONS",
      "TABLE_MAIN",
      "AGENT_RUN_WORKER",
      "PATH",
    ]) {
      const r = await call("PATCH", `/v2/deployments/${normal.deploymentId}`, {
        headers,
        body: { secrets: [{ name, value: "x" }] },
      });
      expect(r.status, name).toBe(422);
      expect(r.json.detail[0].loc).toEqual(["body", "secrets", 0, "name"]);
      expect(r.json.detail[0].msg).toContain(name);
    }
  });
});
