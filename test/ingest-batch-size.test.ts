import { randomBytes } from "node:crypto";
import { Client } from "langsmith";
import { describe, expect, it } from "vitest";
import { config } from "../shared/config.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// The batch size GET /info advertises is one the AWS path can take (Lambda's 6 MiB synchronous payload, a binary
// body base64-encoded in the event), the real langsmith SDK splits a larger batch by it, and a request over the
// limit is a 413 with a JSON body, never a 5xx.
const LAMBDA_SYNC_PAYLOAD = 6 * 1024 * 1024;

interface Sent {
  url: string;
  status: number;
  body?: string;
}

function recordingClient(sent: Sent[]) {
  const fetchImplementation: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    sent.push({ url, status: res.status, body: res.ok ? undefined : await res.clone().text() });
    return res;
  };
  return new Client({
    apiUrl: `${base}/api/v1`,
    apiKey: facts.api_key,
    autoBatchTracing: true,
    fetchImplementation,
  });
}

/** A root run the SDK queues for a batch (it batches only runs with trace_id and dotted_order). */
function rootRun(name: string, project: string, inputs: Record<string, unknown>) {
  const id = crypto.randomUUID();
  const stamp = new Date().toISOString().replace(/[-:.]/g, "").replace("Z", "000Z");
  return {
    id,
    trace_id: id,
    dotted_order: `${stamp}${id}`,
    name,
    run_type: "chain",
    project_name: project,
    inputs,
    start_time: Date.now(),
  };
}

/** Inputs of about `bytes` that gzip cannot shrink much (random), so batches stay big on the wire too. */
const bulky = (bytes: number) => ({ blob: randomBytes(Math.floor((bytes * 3) / 4)).toString("base64") });

describe("ingestion batch size", () => {
  it("GET /api/v1/info advertises a size_limit_bytes whose batches fit Lambda's synchronous payload", async () => {
    const r = await call("GET", "/api/v1/info");
    const limit = r.json.batch_ingest_config.size_limit_bytes;
    expect(limit).toBe(config.ingestBatchBytes);
    // A batch may pass the limit by one run before the SDK closes it: twice the limit is still a request AWS takes.
    expect(2 * limit).toBeLessThanOrEqual(config.maxRequestBytes);
    expect(Math.ceil((config.maxRequestBytes * 4) / 3) + 256 * 1024).toBeLessThanOrEqual(LAMBDA_SYNC_PAYLOAD);
  });

  it("the langsmith SDK splits runs larger than the limit in all into several requests, and every run arrives", async () => {
    const sent: Sent[] = [];
    const client = recordingClient(sent);
    const project = `batch-size-${crypto.randomUUID().slice(0, 8)}`;
    const per = Math.floor(config.ingestBatchBytes / 4);
    const runs = Array.from({ length: 12 }, () => rootRun("bulky", project, bulky(per)));
    const ids = runs.map((r) => r.id);
    for (const run of runs) await client.createRun(run as Parameters<Client["createRun"]>[0]);
    await client.awaitPendingTraceBatches();
    const ingests = sent.filter((s) => /\/runs\/(multipart|batch)$/.test(new URL(s.url).pathname));
    expect(ingests.length).toBeGreaterThan(2);
    expect(ingests.filter((s) => s.status >= 300)).toEqual([]);
    for (const id of ids) {
      const got = (await call("GET", `/api/v1/runs/${id}`, { headers: auth })).json;
      expect(got.inputs.blob.length, id).toBeGreaterThan(per / 2);
    }
  });

  it("a single run over the request limit is answered 413 with a JSON body, never a 5xx", async () => {
    const sent: Sent[] = [];
    const client = recordingClient(sent);
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      const run = rootRun("too big", "batch-size-too-big", bulky(2 * config.maxRequestBytes));
      await client.createRun(run as Parameters<Client["createRun"]>[0]);
      await client.awaitPendingTraceBatches();
    } finally {
      console.error = original;
    }
    const ingests = sent.filter((s) => /\/runs\/(multipart|batch)$/.test(new URL(s.url).pathname));
    expect(ingests.length).toBeGreaterThan(0);
    for (const s of ingests) {
      expect(s.status).toBe(413);
      expect(JSON.parse(s.body!).detail).toMatch(/exceeds the limit of \d+ bytes/);
    }
  });
});
