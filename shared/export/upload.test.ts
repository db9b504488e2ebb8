import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamedFile } from "./upload.ts";

// A destination that reads the request, then answers a byte every 200 ms and never ends: each byte keeps the
// socket's idle timeout from firing, so only a deadline on the whole call ends it (secreview5).
let server: Server;
let client: S3Client;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/xml" });
      const tick = setInterval(() => res.write(" "), 200);
      res.on("close", () => clearInterval(tick));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  client = new S3Client({
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: "k", secretAccessKey: "s" },
    maxAttempts: 1,
    requestHandler: { requestTimeout: 60_000 },
  });
});
afterAll(async () => {
  client.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("StreamedFile's calls to a destination", () => {
  it("end at their deadline when the destination trickles its answer", async () => {
    const file = new StreamedFile(client, "b", "x/file.parquet", 1 << 20, {
      baseMs: 1_000,
      bytesPerSecond: 1 << 20,
    });
    const started = Date.now();
    await expect(file.complete([Buffer.from("rows")])).rejects.toThrow();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(10_000);
  });

  it("give a bigger body more time, at the deadline's rate", async () => {
    // 512 KiB at 256 KiB/s: 2 s more than the 500 ms base.
    const file = new StreamedFile(client, "b", "x/big.parquet", 1 << 20, {
      baseMs: 500,
      bytesPerSecond: 256 * 1024,
    });
    const started = Date.now();
    await expect(file.complete([Buffer.alloc(512 * 1024)])).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
  });
});
