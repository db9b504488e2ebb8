import { lookup } from "node:dns/promises";
import { createServer, type Server } from "node:http";
import { hostname } from "node:os";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { type FakeServer, fakeServer } from "../harness/fake-http.ts";
import { gitRepo } from "../harness/repos.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 33: a run's webhook is a request the platform makes on a deployment's behalf, so it obeys the deployment's
// egress rules. Before, a webhook could name any loopback address on the local cloud (the platform POSTed there
// the body the runtime handed it), and the failure text told a closed port from an open one. Now: no loopback,
// link-local, private, CGNAT or metadata address (after DNS, pinned) unless EGRESS_ALLOW lists the host, redirects
// not followed, the body built by the platform from the run's record, and a failure says its class only.
const env = inject("env");
const portOf = (url: string | undefined) => Number(new URL(url ?? "http://x:1").port);

// `forge` asks the platform for webhooks over its socket, as a hostile runtime would: the egress relay on the
// sandbox's loopback (HTTP_PROXY) leads to the platform's socket, whose run-webhook path takes the runtime's asks.
const GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import * as http from "node:http";
const State = Annotation.Root({
  items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  asks: Annotation(),
  answers: Annotation(),
});
export const quick = new StateGraph(State)
  .addNode("work", async () => ({ items: ["done"] }))
  .addEdge(START, "work").compile();
const relay = () => new URL(process.env.HTTP_PROXY);
const ask = (payload) => new Promise((resolve) => {
  const req = http.request({
    host: relay().hostname, port: relay().port, path: "/__platform/run-webhook", method: "POST",
    agent: new http.Agent(), headers: { "content-type": "application/json" },
  }, (res) => {
    let text = "";
    res.on("data", (c) => { text += c; });
    res.on("end", () => resolve({ status: res.statusCode, text }));
  });
  req.on("error", (e) => resolve({ status: 0, text: String(e) }));
  req.end(JSON.stringify(payload));
});
export const forge = new StateGraph(State)
  .addNode("ask", async (s) => {
    const answers = [];
    for (const a of s.asks) answers.push(await ask(a));
    return { answers };
  })
  .addEdge(START, "ask").compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({
    graphs: { quick: "./src/graph.mjs:quick", forge: "./src/graph.mjs:forge" },
  }),
  "src/graph.mjs": GRAPH,
});

/** A listener on an internal address that must never hear from the platform. */
async function internalListener(host: string) {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.end("internal");
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { seen, server, port: (server.address() as { port: number }).port };
}

let client: Client;
let internal: Awaited<ReturnType<typeof internalListener>>;
let internal6: Awaited<ReturnType<typeof internalListener>>;
let receiver: FakeServer;

beforeAll(async () => {
  internal = await internalListener("127.0.0.1");
  internal6 = await internalListener("::1");
  // An allowed third party (EGRESS_ALLOW names its port): on /redirect a 302 to the loopback listener, on
  // /status a 404 with words of its own, else 200.
  receiver = await fakeServer((req) => {
    if (req.path === "/redirect")
      return { status: 302, headers: { location: `http://127.0.0.1:${internal.port}/redirected` } };
    if (req.path === "/status") return { status: 404, body: "the receiver's own words", type: "text/plain" };
    return { status: 200 };
  });
  ({ client } = await deployedClient(facts, repo.dir, "webhook-breakout"));
}, 240_000);

afterAll(async () => {
  repo.remove();
  await receiver?.close();
  await Promise.all([internal, internal6].map((l) => l && new Promise((r) => l.server.close(r))));
});

type Answer = { status: number; text: string };
/** The forge graph's asks, answered by the platform's socket. */
async function forge(asks: Record<string, unknown>[]): Promise<Answer[]> {
  const out = (await client.runs.wait(null, "forge", { input: { asks } })) as { answers: Answer[] };
  return out.answers;
}

/**
 * A run of `quick` for each webhook, finished; then the platform's answers when the runtime asks it to send them
 * (again): the failure of each, in order.
 */
async function failuresOf(webhooks: string[]): Promise<unknown[]> {
  const runs = await Promise.all(
    webhooks.map(async (webhook) => {
      const t = await client.threads.create();
      const run = await client.runs.create(t.thread_id, "quick", { input: {}, webhook });
      await client.runs.join(t.thread_id, run.run_id);
      return { thread_id: t.thread_id, run_id: run.run_id };
    }),
  );
  const answers = await forge(runs);
  expect(answers.map((a) => a.status)).toEqual(runs.map(() => 200));
  return answers.map((a) => JSON.parse(a.text).failure);
}
const refusedAll = (n: number) => Array(n).fill("refused address");

const nothingInternal = () => {
  expect(internal.seen).toEqual([]);
  expect(internal6.seen).toEqual([]);
};

describe("a run's webhook obeys the deployment's egress rules", () => {
  it("127.0.0.1 on the platform's ports, a closed port or a listener: refused alike, nothing delivered", async () => {
    const ports = {
      gateway: portOf(facts.base_url),
      s3: portOf(env.AWS_ENDPOINT_URL_S3),
      awsEmulator: portOf(env.AWS_ENDPOINT_URL_KMS),
      dynamodb: portOf(env.AWS_ENDPOINT_URL_DYNAMODB),
      listener: internal.port,
      closed: 9,
    };
    const failures = await failuresOf(Object.values(ports).map((port) => `http://127.0.0.1:${port}/hook`));
    // One answer whatever is listening: no port scan through the webhook's failure.
    expect(Object.fromEntries(Object.keys(ports).map((name, i) => [name, failures[i]]))).toEqual(
      Object.fromEntries(Object.keys(ports).map((name) => [name, "refused address"])),
    );
    nothingInternal();
  });

  it("localhost, and a host name that resolves to loopback, are refused after DNS", async () => {
    // The machine's own name resolves to loopback on most hosts (/etc/hosts); else the FQDN form of localhost.
    const own = hostname();
    const ownIsLoopback = await lookup(own).then(
      (a) => a.address.startsWith("127.") || a.address === "::1",
      () => false,
    );
    const hosts = ["localhost", "LOCALHOST.", ownIsLoopback ? own : "localhost."];
    expect(await failuresOf(hosts.map((host) => `http://${host}:${internal.port}/hook`))).toEqual(
      refusedAll(hosts.length),
    );
    nothingInternal();
  });

  it("[::1] and loopback written as IPv4-mapped IPv6 (or as a number) are refused", async () => {
    const urls = [
      `http://[::1]:${internal6.port}/hook`,
      `http://[::ffff:127.0.0.1]:${internal.port}/hook`,
      `http://[::ffff:7f00:1]:${internal.port}/hook`,
      `http://2130706433:${internal.port}/hook`,
    ];
    expect(await failuresOf(urls)).toEqual(refusedAll(urls.length));
    nothingInternal();
  });

  it("the metadata address and private, CGNAT and multicast addresses are refused without a connection", async () => {
    const hosts = ["169.254.169.254", "10.0.0.1", "192.168.0.1", "172.16.0.1", "100.64.0.1", "224.0.0.1"];
    // A connection attempt would end as a timeout or as unreachable: refused means none was made.
    expect(await failuresOf(hosts.map((host) => `http://${host}/latest/meta-data/`))).toEqual(
      refusedAll(hosts.length),
    );
  });

  it("an allowed host that redirects to loopback: the redirect is not followed", async () => {
    const before = receiver.seen.length;
    expect(await failuresOf([`${receiver.url}/redirect`])).toEqual(["status 302"]);
    // The run's own webhook and the one asked again: each a single POST, the 302 the end of it.
    await waitFor("both sends", async () => receiver.seen.length - before >= 2, 10_000, 50);
    expect(receiver.seen.slice(before).map((s) => s.path)).toEqual(["/redirect", "/redirect"]);
    nothingInternal();
  });

  it("a failure's record says the status, never what the target answered", async () => {
    expect(await failuresOf([`${receiver.url}/status`])).toEqual(["status 404"]);
  });

  it("the host EGRESS_ALLOW names gets the webhook: the run as GET run shows it, with its values", async () => {
    const before = receiver.seen.length;
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "quick", { input: {}, webhook: `${receiver.url}/ok` });
    await client.runs.join(t.thread_id, run.run_id);
    const seen = await waitFor(
      "the webhook",
      async () => receiver.seen.length > before && receiver.seen.slice(before),
      10_000,
      50,
    );
    expect(seen[0]).toMatchObject({ method: "POST", path: "/ok" });
    expect(JSON.parse(seen[0].body)).toMatchObject({
      ...(await client.runs.get(t.thread_id, run.run_id)),
      values: { items: ["done"] },
    });
  });

  it("a runtime that hands the platform its own URL and body: the platform sends its own, to the record's URL", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "quick", { input: {}, webhook: `${receiver.url}/own` });
    await client.runs.join(t.thread_id, run.run_id);
    await waitFor(
      "the run's own webhook",
      async () => receiver.seen.some((s) => s.path === "/own"),
      10_000,
      50,
    );
    const before = receiver.seen.length;
    const forged = `http://127.0.0.1:${internal.port}/forged`;
    const [answer] = await forge([
      {
        thread_id: t.thread_id,
        run_id: run.run_id,
        url: forged,
        webhook: forged,
        body: '{"forged":true}',
        headers: { "content-type": "text/plain" },
      },
    ]);
    expect(answer.status).toBe(200);
    const [again] = receiver.seen.slice(before);
    expect(again).toMatchObject({ method: "POST", path: "/own" });
    expect(again.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(again.body);
    expect(body).not.toHaveProperty("forged");
    expect(body).toMatchObject({ ...(await client.runs.get(t.thread_id, run.run_id)), values: null });
    // A run without a webhook is not sent anywhere, whatever URL comes with the ask; an unknown run is a 404.
    const bare = await client.threads.create();
    expect(await client.runs.wait(bare.thread_id, "quick", { input: {} })).toEqual({ items: ["done"] });
    const [last] = await client.runs.list(bare.thread_id, { limit: 1 });
    const [none, unknown] = await forge([
      { thread_id: bare.thread_id, run_id: last.run_id, url: forged },
      { thread_id: bare.thread_id, run_id: crypto.randomUUID(), url: forged },
    ]);
    expect({ status: none.status, ...JSON.parse(none.text) }).toEqual({
      status: 200,
      failure: "no webhook to send",
    });
    expect(unknown.status).toBe(404);
    nothingInternal();
  });

  it("a webhook that is no http(s) URL, or carries credentials, is a 422 when the run is created", async () => {
    const t = await client.threads.create();
    for (const webhook of ["file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "http://u:p@example.com/h"])
      await expect(client.runs.create(t.thread_id, "quick", { input: {}, webhook })).rejects.toThrow(/422/);
    nothingInternal();
  });
});
