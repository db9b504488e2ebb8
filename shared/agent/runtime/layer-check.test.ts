import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resetClients } from "../../aws/clients.ts";
import { staleRuntimes } from "./layer-check.ts";

// Issue 26: runtimes kept the old layer version after a platform upgrade. Lambda's function listing has no local
// stand-in (local runtimes run the platform's code of the moment), so a stand-in endpoint answers ListFunctions
// in two pages.
const LAYER = (v: number) => `arn:aws:lambda:eu-west-1:123456789012:layer:agent-platform-runtime:${v}`;
const PAGES: Record<string, unknown> = {
  "": {
    Functions: [
      { FunctionName: "agent-rt-old", Layers: [{ Arn: LAYER(3) }] },
      { FunctionName: "agent-rt-new", Layers: [{ Arn: LAYER(4) }] },
      { FunctionName: "someone-else", Layers: [{ Arn: LAYER(1) }] },
    ],
    NextMarker: "m2",
  },
  m2: {
    Functions: [
      { FunctionName: "agent-rt-bare" },
      { FunctionName: "agent-rt-new2", Layers: [{ Arn: LAYER(4) }] },
    ],
  },
};
let server: Server;
const saved = process.env.AWS_ENDPOINT_URL_LAMBDA;

// In Lambda AWS_REGION is always set; the platform's clients take the region from the SDK's own resolution.
beforeAll(() => {
  vi.stubEnv("AWS_REGION", "us-east-1");
});
afterAll(() => {
  vi.unstubAllEnvs();
});
beforeAll(async () => {
  server = createServer((req, res) => {
    const marker = new URL(req.url ?? "/", "http://x").searchParams.get("Marker") ?? "";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(PAGES[marker]));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  process.env.AWS_ENDPOINT_URL_LAMBDA = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID ??= "test";
  process.env.AWS_SECRET_ACCESS_KEY ??= "test";
  resetClients();
});
afterAll(() => {
  server.close();
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_LAMBDA;
  else process.env.AWS_ENDPOINT_URL_LAMBDA = saved;
  resetClients();
});

describe("runtimes after a platform upgrade", () => {
  it("are stale when their function lacks the platform's current layer version, over every page", async () => {
    expect(await staleRuntimes(LAYER(4))).toEqual(["old", "bare"]);
  });
});
