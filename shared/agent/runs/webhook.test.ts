import { createServer, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunRecord } from "../../records/agent.ts";
import { toRun } from "./runs.ts";
import { sendRunWebhook } from "./webhook.ts";

// A finished run's webhook, as the platform sends it (locally for a sandboxed runtime, in AWS from the runtime
// function): built from the run's record, to the record's URL, under the egress policy; failures say their class.
let server: Server;
let base = "";
const seen: { path: string; body: string }[] = [];
let answer = { status: 200, body: "" };
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ path: req.url ?? "", body });
      res.writeHead(answer.status).end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  vi.unstubAllEnvs();
  seen.length = 0;
  answer = { status: 200, body: "" };
});

const record = (webhook: string, status: RunRecord["status"] = "success"): RunRecord => ({
  PK: "T#t#AGENT#d#THREAD#th#RUNS",
  SK: "r1",
  run_id: "r1",
  thread_id: "th",
  assistant_id: "a",
  graph_id: "g",
  created_at: "2025-01-01T00:00:00.000Z",
  updated_at: "2025-01-01T00:00:01.000Z",
  status,
  metadata: { m: 1 },
  kwargs: { stream_mode: ["values"], on_disconnect: "cancel", on_completion: "keep", webhook },
  multitask_strategy: "reject",
  final_values: { secret: "worker bookkeeping" },
});

describe("sendRunWebhook", () => {
  it("POSTs the run as GET run shows it, with the outcome's values and error, to the record's URL", async () => {
    vi.stubEnv("EGRESS_ALLOW", base);
    const run = record(`http://${base}/hook?k=1`, "error");
    expect(await sendRunWebhook(run, { values: { items: [1] }, error: "kaput" })).toBeUndefined();
    expect(seen.map((s) => s.path)).toEqual(["/hook?k=1"]);
    const body = JSON.parse(seen[0].body);
    expect(body).toEqual({
      ...toRun(run),
      values: { items: [1] },
      error: "kaput",
      webhook_sent_at: expect.any(String),
    });
    expect(body).not.toHaveProperty("final_values");
  });

  it("sends nothing for a run still running, or without a webhook", async () => {
    vi.stubEnv("EGRESS_ALLOW", base);
    expect(await sendRunWebhook(record(`http://${base}/`, "running"), { values: null })).toBeDefined();
    expect(
      await sendRunWebhook(
        { ...record(""), kwargs: { ...record("").kwargs, webhook: undefined } },
        { values: null },
      ),
    ).toBeDefined();
    expect(seen).toEqual([]);
  });

  it("a loopback URL not in EGRESS_ALLOW is refused, on the local cloud as in AWS, and nothing is sent", async () => {
    for (const local of ["1", "0"]) {
      vi.stubEnv("PLATFORM_LOCAL", local);
      expect(await sendRunWebhook(record(`http://${base}/hook`), { values: null })).toBe("refused address");
      expect(await sendRunWebhook(record("http://127.0.0.1:9/hook"), { values: null })).toBe(
        "refused address",
      );
    }
    expect(seen).toEqual([]);
  });

  it("a failure says its class: the status, never what the target answered", async () => {
    vi.stubEnv("EGRESS_ALLOW", base);
    answer = { status: 404, body: "secret internal page" };
    const failure = await sendRunWebhook(record(`http://${base}/hook`), { values: null });
    expect(failure).toBe("status 404");
    expect(seen).toHaveLength(1);
  });

  it("a 5xx is retried", async () => {
    vi.stubEnv("EGRESS_ALLOW", base);
    answer = { status: 503, body: "busy" };
    expect(await sendRunWebhook(record(`http://${base}/hook`), { values: null })).toBe("status 503");
    expect(seen).toHaveLength(3);
  });
});
