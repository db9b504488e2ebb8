import { createServer, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { UpstreamError } from "../errors.ts";
import { OutboundFailure, outboundRequest } from "./request.ts";

// Outbound calls: any status comes back as an answer; what is not an answer is an OutboundFailure saying its class.
// Where they may go is the egress policy (egress.ts), the same locally and in AWS: the test server on loopback is
// reached only because EGRESS_ALLOW names it.
let server: Server;
let url = "";
let host = "";
const seen: { path?: string; host?: string }[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ path: req.url, host: req.headers.host });
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
    } else if (req.url === "/internal") {
      res.end("internal");
    } else {
      res.writeHead(302, { location: `${url}/internal` });
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  url = `http://${host}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  vi.unstubAllEnvs();
  seen.length = 0;
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e) => e as OutboundFailure,
  );

describe("outboundRequest", () => {
  it("answers any status with its body, and does not follow redirects", async () => {
    vi.stubEnv("EGRESS_ALLOW", host);
    const r = await outboundRequest(`${url}/echo`, {
      method: "POST",
      headers: { "x-test": "h" },
      body: "b=1",
    });
    expect(r).toMatchObject({ status: 418, body: "POST h b=1" });
    expect((await outboundRequest(`${url}/elsewhere`, { method: "GET" })).status).toBe(302);
    expect(seen.map((s) => s.path)).toEqual(["/echo", "/elsewhere"]);
  });

  it("refuses loopback and private addresses on the local cloud as in AWS, without connecting", async () => {
    for (const local of ["1", "0"]) {
      vi.stubEnv("PLATFORM_LOCAL", local);
      const err = await failure(outboundRequest(`${url}/echo`, { method: "GET" }));
      expect(err).toBeInstanceOf(OutboundFailure);
      expect(err?.kind).toBe("refused");
      expect(err?.message).not.toContain(host.split(":")[1]);
    }
    for (const target of ["http://[::ffff:10.0.0.1]/", "http://169.254.169.254/", "http://localhost:1/"])
      expect((await failure(outboundRequest(target, { method: "GET" })))?.kind).toBe("refused");
    expect(seen).toEqual([]);
  });

  it("a refused address and a closed port fail alike: no answer tells which internal port is open", async () => {
    const open = await failure(outboundRequest(`${url}/echo`, { method: "GET" }));
    const closed = await failure(outboundRequest("http://127.0.0.1:9/", { method: "GET" }));
    expect(open?.message).toBe(closed?.message);
  });

  it("connects to the address it checked, not to what DNS says next (no second lookup)", async () => {
    const port = Number(host.split(":")[1]);
    const egress = { allow: [`pinned.test:${port}`], resolve: async () => ["127.0.0.1"] };
    const r = await outboundRequest(`http://pinned.test:${port}/echo`, { method: "GET", egress });
    expect(r.status).toBe(418);
    expect(seen).toEqual([{ path: "/echo", host: `pinned.test:${port}` }]);
    // A name the resolver places on loopback is refused unless listed.
    const other = { allow: [], resolve: async () => ["127.0.0.1"] };
    expect(
      (await failure(outboundRequest(`http://rebind.test:${port}/`, { method: "GET", egress: other })))?.kind,
    ).toBe("refused");
  });

  it("refuses URLs that are not http(s) or carry credentials", async () => {
    vi.stubEnv("EGRESS_ALLOW", host);
    await expect(outboundRequest(`ftp://${host}/`, { method: "GET" })).rejects.toBeInstanceOf(UpstreamError);
    await expect(outboundRequest(`http://u:p@${host}/echo`, { method: "GET" })).rejects.toThrow(
      /credentials/,
    );
  });

  it("cuts answers over the size limit, silent servers and refused connections, saying the class only", async () => {
    vi.stubEnv("EGRESS_ALLOW", `${host},127.0.0.1:9`);
    expect(await failure(outboundRequest(`${url}/big`, { method: "GET", maxBytes: 1000 }))).toMatchObject({
      kind: "too-large",
      message: expect.stringMatching(/larger than 1000/),
    });
    expect(await failure(outboundRequest(`${url}/slow`, { method: "GET", timeoutMs: 100 }))).toMatchObject({
      kind: "timeout",
    });
    expect(await failure(outboundRequest("http://127.0.0.1:9/", { method: "GET" }))).toMatchObject({
      kind: "unreachable",
      message: "unreachable",
    });
    expect(await failure(outboundRequest("http://nowhere.invalid/", { method: "GET" }))).toMatchObject({
      kind: "unreachable",
    });
  });
});
