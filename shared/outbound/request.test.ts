import { createServer, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { UpstreamError } from "../errors.ts";
import { outboundRequest } from "./request.ts";

// Outbound calls: any status comes back as an answer; what is not an answer is an UpstreamError.
let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/big") {
      res.writeHead(200);
      res.end("x".repeat(5000));
    } else if (req.url === "/slow") {
      res.writeHead(200);
      res.write("a");
    } else if (req.url === "/echo") {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        res.writeHead(418, { "content-type": "text/plain" });
        res.end(`${req.method} ${req.headers["x-test"]} ${body}`);
      });
    } else {
      res.writeHead(302, { location: "http://169.254.169.254/" });
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => vi.unstubAllEnvs());

describe("outboundRequest", () => {
  it("answers any status with its body, and does not follow redirects", async () => {
    vi.stubEnv("PLATFORM_LOCAL", "1");
    const r = await outboundRequest(`${url}/echo`, {
      method: "POST",
      headers: { "x-test": "h" },
      body: "b=1",
    });
    expect(r).toMatchObject({ status: 418, body: "POST h b=1" });
    expect((await outboundRequest(`${url}/elsewhere`, { method: "GET" })).status).toBe(302);
  });

  it("refuses loopback and private addresses outside local mode", async () => {
    vi.stubEnv("PLATFORM_LOCAL", "0");
    await expect(outboundRequest(`${url}/echo`, { method: "GET" })).rejects.toThrow(/public endpoint/);
    await expect(outboundRequest("http://[::ffff:10.0.0.1]/", { method: "GET" })).rejects.toBeInstanceOf(
      UpstreamError,
    );
  });

  it("cuts answers over the size limit, silent servers and refused connections", async () => {
    vi.stubEnv("PLATFORM_LOCAL", "1");
    await expect(outboundRequest(`${url}/big`, { method: "GET", maxBytes: 1000 })).rejects.toThrow(
      /larger than 1000/,
    );
    await expect(outboundRequest(`${url}/slow`, { method: "GET", timeoutMs: 100 })).rejects.toThrow(/within/);
    await expect(outboundRequest("http://127.0.0.1:9/", { method: "GET" })).rejects.toThrow(/refused/);
  });
});
