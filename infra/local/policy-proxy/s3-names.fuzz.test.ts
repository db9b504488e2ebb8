import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import fc from "fast-check";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
// The local cloud's s3rver: its store writes an object whole before answering (stock s3rver answers before the
// file exists, so the walk below could run ahead of the write).
import "../s3.ts";
import { Refused } from "./refusal.ts";
import { objectArn, s3Authorizations, s3DeleteObjects } from "./s3-request.ts";
import { queryOf } from "./sigv4.ts";

// Differential: the same generated names go to the proxy's reader and to the real s3rver (in-process, configured
// as infra/local/s3.ts configures it, on a temp folder), whose store is watched for the names it is asked for.
// Wherever the proxy accepts a request, s3rver must touch exactly the bucket and key the proxy authorized.

type Call = [method: string, ...args: unknown[]];
const WATCHED = [
  "getBucket",
  "existsObject",
  "getObject",
  "putObject",
  "copyObject",
  "deleteObject",
  "listObjects",
];
let server: { store: Record<string, (...a: unknown[]) => unknown>; close(): Promise<void> };
let port: number;
let root: string;
let data: string;
let calls: Call[] = [];
const accepted = { path: 0, copy: 0, delete: 0, list: 0 };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "s3-names-"));
  // Deep, so a `..` that got through would land inside `root`, where the walk below sees it.
  data = join(root, "a", "b", "c", "data");
  server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    directory: data,
    silent: true,
    vhostBuckets: false,
    configureBuckets: [
      { name: "bkt", configs: [] },
      { name: "other-bkt", configs: [] },
    ],
  });
  port = (await (server as unknown as { run(): Promise<{ port: number }> }).run()).port;
  const store = server.store;
  for (const m of WATCHED) {
    const f = store[m].bind(store);
    store[m] = (...a: unknown[]) => {
      calls.push([m, ...a]);
      return f(...a);
    };
  }
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => {
  calls = [];
});

/** One raw HTTP/1.1 exchange: the request target and headers exactly as given. */
function send(
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<number> {
  const head = Object.entries({
    host: "127.0.0.1",
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return new Promise((resolve, reject) => {
    const c = connect(port, "127.0.0.1", () =>
      c.write(`${method} ${target} HTTP/1.1\r\n${head}connection: close\r\n\r\n${body}`),
    );
    let out = "";
    c.on("data", (d) => {
      out += d;
    });
    c.on("end", () => resolve(Number(out.split(" ")[1])));
    c.on("error", reject);
  });
}

/** The objects on disk, as `bucket/key` from s3rver's layout (a path outside its folder starts with `..`). */
function objectsOnDisk(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith("._S3rver_object")) out.push(relative(data, p).split(sep).join("/").slice(0, -15));
    }
  };
  walk(root);
  return out;
}
const clearObjects = () => {
  for (const b of ["bkt", "other-bkt"])
    for (const f of readdirSync(join(data, b))) rmSync(join(data, b, f), { recursive: true, force: true });
};

/** The proxy's reading: its authorizations, or undefined where it refuses (a 4xx, never anything else). */
function proxyReads<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (err) {
    expect(err).toBeInstanceOf(Refused);
    expect((err as Refused).status).toBeLessThan(500);
    return undefined;
  }
}
const named = (arn: string) => arn.replace(/^arn:aws:s3:::/, "");
const watched = (method: string) => calls.filter((c) => c[0] === method);

// Plain pieces, and pieces whose readings differ between decoders, routers and file systems.
const PLAIN = ["a", "ws1", "b-c", "/", "x%20y", "~", "'", "%C3%A9", "%2523d", "!", "(", "*"];
const TRICKY = [
  "//",
  ".",
  "..",
  "%2E",
  "%2e%2E",
  "%2F",
  "%2f",
  "%5C",
  "\\",
  "#",
  "%23",
  "?",
  "%3F",
  "&",
  "%26",
  "+",
  "%2B",
  "%25",
  "%252F",
  "%",
  "%zz",
  "%00",
  "%0A",
  "%E2%80%A8",
  "%ED%A0%80",
  ";",
  "=",
  ":",
  "@",
  "$",
  ",",
  '"',
  "|",
  "._S3rver_object",
  "versionId=1",
];
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PLAIN) },
  { weight: 1, arbitrary: fc.constantFrom(...TRICKY) },
);
const raw = fc.array(piece, { minLength: 1, maxLength: 8 }).map((p) => p.join(""));
const bucketPiece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("bkt", "other-bkt") },
  { weight: 1, arbitrary: fc.constantFrom("..", "%2E%2E", "BKT", "", "bkt%2Fa", "bkt..x") },
);
/** Each property must reach s3rver often, not only be refused. */
const exercised = (n: number) => {
  if (!process.env.FUZZ_PATH) expect(n).toBeGreaterThan(RUNS.numRuns / 5);
};
const RUNS = { numRuns: 300 };

describe("the proxy reads S3 names as s3rver does, or refuses (differential fuzz)", () => {
  it("an object path: s3rver writes the very bucket and key the proxy authorized", async () => {
    await fc.assert(
      fc.asyncProperty(bucketPiece, raw, async (b, k) => {
        calls = [];
        clearObjects();
        const target = `/${b}/${k.replace(/ /g, "%20")}`;
        const call = proxyReads(() => s3Authorizations("PUT", target));
        if (!call?.key) return; // refused, or a bucket call (CreateBucket)
        accepted.path++;
        const status = await send("PUT", target, {}, "x");
        expect(status, target).toBe(200);
        const put = watched("putObject").map((c) => c[1] as { bucket: string; key: string });
        expect(put.map((o) => `${o.bucket}/${o.key}`)).toEqual([named(call.authorizations[0].resource)]);
        expect(objectsOnDisk()).toEqual([named(call.authorizations[0].resource)]);
      }),
      RUNS,
    );
    exercised(accepted.path);
  });

  it("a copy source: s3rver looks up the very source the proxy authorized", async () => {
    const suffix = fc.oneof(
      { weight: 4, arbitrary: fc.constant("") },
      { weight: 1, arbitrary: fc.constantFrom("?versionId=1", "?", "%3FversionId=1", "?x-id=a") },
    );
    await fc.assert(
      fc.asyncProperty(fc.boolean(), bucketPiece, raw, suffix, async (slash, b, k, s) => {
        calls = [];
        const source = `${slash ? "/" : ""}${b}/${k}${s}`;
        const call = proxyReads(() => s3Authorizations("PUT", "/bkt/zz-destination", source));
        if (!call) return;
        accepted.copy++;
        await send("PUT", "/bkt/zz-destination", { "x-amz-copy-source": source });
        const expected = named(call.authorizations[1].resource);
        const looked = watched("existsObject").map((c) => `${c[1]}/${c[2]}`);
        expect(looked, source).toEqual([expected]);
      }),
      RUNS,
    );
    exercised(accepted.copy);
  });

  it("a DeleteObjects body: s3rver deletes the very keys the proxy authorized", async () => {
    const text = fc
      .array(
        fc.oneof(
          {
            weight: 4,
            arbitrary: fc.constantFrom("a", "ws1/", "b-c", "&amp;", "&lt;", "&#x41;", "%2F", "é"),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              "/",
              "..",
              ".",
              "&#46;",
              "&#46",
              "&#x2E;",
              "&#x2F;",
              "&#47;",
              "&amp",
              "&nbsp;",
              "&#x85;",
              "&#128;",
              "&#0;",
              "&#xD800;",
              "&#x110000;",
              " ",
              "\t",
              "1",
              "0x1",
              "1e3",
              "true",
              "\\",
            ),
          },
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map((p) => p.join(""));
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 3 }), async (keys) => {
        calls = [];
        const body = `<Delete>${keys.map((k) => `<Object><Key>${k}</Key></Object>`).join("")}</Delete>`;
        const read = proxyReads(() => s3DeleteObjects(body).map((o) => named(objectArn("bkt", o.key))));
        if (!read) return;
        accepted.delete++;
        await send("POST", "/bkt?delete", { "content-type": "application/xml" }, body);
        const looked = watched("existsObject").map((c) => `${c[1]}/${String(c[2])}`);
        expect(looked.sort(), body).toEqual([...read].sort());
      }),
      RUNS,
    );
    exercised(accepted.delete);
  });

  it("a listing: s3rver lists with the very prefix the proxy's s3:prefix condition saw", async () => {
    await fc.assert(
      fc.asyncProperty(raw, fc.constantFrom("prefix", "start-after", "delimiter"), async (v, name) => {
        calls = [];
        const target = `/bkt?list-type=2&${name}=${v.replace(/ /g, "%20")}`;
        const call = proxyReads(() => s3Authorizations("GET", target));
        if (!call) return;
        accepted.list++;
        await send("GET", target);
        const options = watched("listObjects")[0]?.[2] as Record<string, unknown> | undefined;
        const key = { prefix: "prefix", "start-after": "startAfter", delimiter: "delimiter" }[name] as string;
        // s3rver takes an empty value as none.
        expect(options?.[key] ?? "", target).toBe(queryOf(target)[name]);
        expect(options?.prefix ?? "", target).toBe(call.authorizations[0].context["s3:prefix"]);
      }),
      RUNS,
    );
    exercised(accepted.list);
  });
});
