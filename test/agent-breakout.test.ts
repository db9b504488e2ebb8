import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 25: a hostile deployment, beside a victim in another workspace, tries to break out of its runtime's
// sandbox. Before the sandbox, a graph node reached DynamoDB Local, s3rver and the AWS emulator on loopback (no
// credentials checked there), read the platform's tables, decrypted another workspace's secret and wrote itself an
// API key. Now its network namespace has only a loopback of its own; its one way out is the platform's socket,
// whose egress proxy reaches public addresses only (and what the operator allows: EGRESS_ALLOW, here a stand-in for
// a model vendor's API on loopback).
const env = inject("env");
const backends = inject("backends");
/** What the hostile graph goes after: the backends, the policy proxy in front of them, the gateway. */
const TARGETS = ["dynamodb", "s3", "awsEmulator", "awsProxy", "gateway"];
const portOf = (url: string | undefined) => Number(new URL(url ?? "http://x:1").port);

const HOSTILE = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import * as net from "node:net";
import * as http from "node:http";
const targets = JSON.parse(process.env.TARGETS);
const settle = (p) => Promise.race([p, new Promise((r) => setTimeout(() => r({ ok: false, error: "timeout" }), 5000))]);
const tcp = (port) => settle(new Promise((resolve) => {
  const s = net.connect({ host: "127.0.0.1", port });
  s.once("connect", () => { s.destroy(); resolve({ ok: true }); });
  s.once("error", (e) => resolve({ ok: false, error: e.code ?? String(e) }));
}));
const viaFetch = (url) => settle(fetch(url).then(
  async (r) => ({ ok: r.ok, status: r.status, body: (await r.text()).slice(0, 200) }),
  (e) => ({ ok: false, error: String(e?.cause?.message ?? e?.message ?? e).slice(0, 200) }),
));
const viaHttp = (url) => settle(new Promise((resolve) => {
  const req = http.get(url, (res) => {
    let body = "";
    res.on("data", (c) => { body += c; });
    res.on("end", () => resolve({ ok: res.statusCode === 200, status: res.statusCode, body: body.slice(0, 200) }));
  });
  req.on("error", (e) => resolve({ ok: false, error: e.code ?? String(e) }));
}));
async function attack() {
  const out = { tcp: {}, fetch: {}, http: {} };
  for (const [name, port] of Object.entries(targets.ports)) {
    out.tcp[name] = await tcp(port);
    out.fetch[name] = await viaFetch("http://127.0.0.1:" + port + "/");
    out.http[name] = await viaHttp("http://127.0.0.1:" + port + "/");
  }
  out.metadata = await viaFetch("http://169.254.169.254/latest/meta-data/");
  out.allowedFetch = await viaFetch(targets.allowed + "/v1/models");
  out.allowedHttp = await viaHttp(targets.allowed + "/v1/models");
  out.proxyEnv = process.env.HTTPS_PROXY ?? null;
  return out;
}
const State = Annotation.Root({ report: Annotation() });
export const graph = new StateGraph(State)
  .addNode("attack", async () => ({ report: await attack() }))
  .addEdge(START, "attack").compile();
`;

const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": HOSTILE,
});
let stand: Server;
let report: any;

beforeAll(async () => {
  // The stand-in for a model vendor's API, which the platform's EGRESS_ALLOW names (test/global-setup.ts).
  const allowed = inject("egressAllowed");
  stand = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ data: [{ id: "stand-in-model" }], path: req.url }));
  });
  await new Promise<void>((r) => stand.listen(portOf(allowed), "127.0.0.1", r));
  // The victim: another workspace, whose data the hostile deployment goes after.
  const victim = newTenantId();
  await ensureTenant(victim, "Victim workspace");
  await storeApiKey(newApiKey(), [victim]);
  const targets = {
    ports: {
      dynamodb: portOf(backends.dynamodb.endpoint),
      s3: portOf(backends.s3.endpoint),
      awsEmulator: portOf(backends.emulator.endpoint),
      awsProxy: portOf(env.AWS_ENDPOINT_URL_S3),
      gateway: portOf(facts.base_url),
    },
    allowed,
  };
  const { client } = await deployedClient(facts, repo.dir, "breakout-net", [
    { name: "TARGETS", value: JSON.stringify(targets) },
  ]);
  const t = await client.threads.create();
  report = ((await client.runs.wait(t.thread_id, "agent", { input: {} })) as { report: unknown }).report;
}, 240_000);

afterAll(async () => {
  repo.remove();
  await new Promise((r) => stand?.close(r));
});

describe("a runtime's network: the platform socket and the egress proxy only", () => {
  it("cannot open a connection to DynamoDB Local, s3rver, the AWS emulator, the policy proxy or the gateway", () => {
    for (const name of TARGETS)
      expect(report.tcp[name], name).toMatchObject({ ok: false, error: "ECONNREFUSED" });
  });

  it("cannot reach them through the egress proxy either, with fetch or node:http", () => {
    for (const name of TARGETS) {
      // Refused at the proxy: no answer of the service itself (a status) ever comes back.
      expect(report.fetch[name], name).toMatchObject({ ok: false, error: expect.any(String) });
      expect(report.fetch[name].status, name).toBeUndefined();
      expect(report.http[name], name).toMatchObject({ ok: false, error: "EGRESS_REFUSED" });
    }
  });

  it("cannot reach the cloud's metadata address", () => {
    expect(report.metadata.ok).toBe(false);
  });

  it("reaches an allowed API through the egress proxy, with fetch and node:http", () => {
    expect(report.proxyEnv).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const r of [report.allowedFetch, report.allowedHttp]) {
      expect(r).toMatchObject({ ok: true, status: 200 });
      expect(JSON.parse(r.body)).toEqual({ data: [{ id: "stand-in-model" }], path: "/v1/models" });
    }
  });
});
