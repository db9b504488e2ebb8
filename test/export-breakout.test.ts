import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newBucket, newWorkspace, s3Proxy } from "../harness/export.ts";
import { DestinationError } from "../shared/errors.ts";
import { openDestination } from "../shared/export/destinations.ts";
import { destinations } from "../shared/records/export.ts";
import { call, customer, facts } from "./helpers/cloud.ts";

// Issue 33, finding 8: a workspace makes the platform export into the platform's own S3 (or another service behind
// the policy proxy) with the local S3's public keys, or climbs out of its prefix with `..`: exports would then write
// into other workspaces' prefixes without passing the policy proxy. Every form is refused at creation (422 naming
// why), and a destination stored before these rules cannot be opened for an export.
const PATH = "/api/v1/bulk-exports/destinations";
const env = inject("env");
const port = (u: string) => new URL(u).port;
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let bucket: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ws = await newWorkspace();
  bucket = await newBucket(customer, "brk");
});
afterAll(async () => {
  for (const c of closers) await c();
});

const create = (config: Record<string, unknown>, credentials: Record<string, string> = customer.s3) =>
  call("POST", PATH, {
    headers: ws.headers,
    body: {
      destination_type: "s3",
      display_name: "breakout",
      config: { bucket_name: bucket, prefix: "mine", endpoint_url: customer.s3.endpoint, ...config },
      credentials: {
        access_key_id: credentials.access_key_id,
        secret_access_key: credentials.secret_access_key,
      },
    },
  });

const issue = (r: { json: any }, loc: string) =>
  r.json?.detail?.find((d: { loc: string[] }) => d.loc.join(".") === loc)?.msg as string | undefined;

describe("an export destination is never the platform's own", () => {
  it("the platform's S3 is refused under every alias of its address, with its keys or the workspace's", async () => {
    const p = port(facts.s3.endpoint);
    const aliases = [
      facts.s3.endpoint,
      `http://localhost:${p}`,
      `http://127.0.0.2:${p}`,
      `http://0.0.0.0:${p}`,
      `http://[::1]:${p}`,
      `http://[::ffff:127.0.0.1]:${p}`,
      `http://127.1:${p}/`,
    ];
    for (const endpoint_url of aliases)
      for (const keys of [facts.s3, customer.s3]) {
        const r = await create({ bucket_name: facts.s3.bucket, endpoint_url, prefix: "x" }, keys);
        expect(r.status, `${endpoint_url}: ${r.text}`).toBe(422);
        expect(issue(r, "body.config.endpoint_url")).toMatch(/platform's own services/);
      }
  });

  it("the services behind the policy proxy and the proxy itself are refused as endpoints", async () => {
    const services = [
      facts.dynamodb_endpoint,
      env.AWS_ENDPOINT_URL_KMS,
      env.AWS_ENDPOINT_URL_LAMBDA,
      facts.base_url,
    ].filter(Boolean);
    expect(services.length).toBeGreaterThanOrEqual(3);
    for (const endpoint_url of services) {
      const r = await create({ endpoint_url });
      expect(r.status, `${endpoint_url}: ${r.text}`).toBe(422);
    }
  });

  it("the platform's own access key is refused on the workspace's own S3", async () => {
    const r = await create({}, facts.s3);
    expect(r.status, r.text).toBe(422);
    expect(issue(r, "body.credentials.access_key_id")).toMatch(/not the platform's/);
  });

  it.each([
    ["../other-workspace"],
    ["mine/../../runs"],
    ["mine/%2e%2e/x"],
    ["mine//x"],
    ["mine\\..\\x"],
    ["mine/\u0000"],
  ])("a prefix %j that climbs out or reads as another path is a 422 at config.prefix", async (prefix) => {
    const r = await create({ prefix });
    expect(r.status, r.text).toBe(422);
    expect(issue(r, "body.config.prefix")).toBeDefined();
  });

  it("a workspace's own S3 through a proxy of its own on loopback is still a destination", async () => {
    const proxy = await s3Proxy(customer.s3.endpoint);
    closers.push(() => proxy.close());
    const r = await create({ endpoint_url: proxy.endpoint });
    expect(r.status, r.text).toBe(200);
  });

  it("a destination stored before these rules is refused when an export opens it", async () => {
    const cases = [
      [{ prefix: "mine", endpoint_url: facts.s3.endpoint }, /platform's own services/],
      [{ prefix: "../x", endpoint_url: customer.s3.endpoint }, /prefix must not hold \. or \.\. segments/],
    ] as const;
    for (const [cfg, why] of cases) {
      const id = crypto.randomUUID();
      await destinations.put({
        id,
        tenant_id: ws.tenant,
        destination_type: "s3",
        display_name: "old",
        config: { bucket_name: bucket, region: null, include_bucket_in_prefix: false, ...cfg },
        credentials_keys: [],
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      });
      const err = await openDestination(ws.tenant, id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DestinationError);
      expect((err as Error).message).toMatch(why);
    }
  });
});

// secreview5: the SDK reads an answer's body whole, and nothing bounded it: a workspace's destination whose endpoint
// answered the creation write test with an endless body grew the platform process by ~200 MB a second (3.7 GB in
// 18 s, tried live) until the host ran out of memory — every workspace's platform gone, from one API call.
describe("a destination's endpoint cannot fill the platform's memory", () => {
  // Sends at most this much (the old code read all of it), then ends the answer.
  const SEND_BYTES = 256 << 20;
  const endless = async (status: number) => {
    const sent = { bytes: 0, closed: false };
    const chunk = Buffer.alloc(1 << 20, 0x41);
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(status, { ETag: '"e"', "Content-Type": "application/xml" });
        const pump = () => {
          while (sent.bytes < SEND_BYTES) {
            sent.bytes += chunk.length;
            if (!res.write(chunk)) return;
          }
          res.end();
        };
        res.on("drain", pump);
        res.on("close", () => {
          sent.closed = true;
        });
        pump();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent };
  };

  it.each([[200], [500]])(
    "an endless answer (HTTP %i) to the write test is a 400, and the platform stops reading it",
    async (status) => {
      const evil = await endless(status);
      const r = await create({ endpoint_url: evil.endpoint });
      expect(r.status, r.text).toBe(400);
      // The platform hangs up after its bound (1 MiB) plus what the sockets' buffers held.
      expect(evil.sent.bytes).toBeLessThan(64 << 20);
    },
  );

  it("an answer that trickles a byte every few seconds is a 400 within the write test's deadline, not the API's 5xx", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { ETag: '"e"' });
        const drip = setInterval(() => res.write("A"), 2_000);
        res.on("close", () => clearInterval(drip));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const r = await create({ endpoint_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    expect(r.status, r.text).toBe(400);
    expect(r.text).toMatch(/Invalid endpoint/);
  }, 60_000);
});
