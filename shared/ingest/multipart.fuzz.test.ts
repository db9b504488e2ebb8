import zlib from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BodyTooLarge, decodeBody, MalformedBody, UnsupportedEncoding } from "./body.ts";
import { quoteParam } from "./header-params.ts";
import { buildMultipart, type Part, parseMultipart } from "./multipart.ts";
import { groupRunParts } from "./parts.ts";

const NUM_RUNS = 500;

/** Text that can sit in a header line: anything but CR and LF. */
const lineText = (min = 0) =>
  fc.string({ unit: "grapheme", minLength: min, maxLength: 30 }).filter((s) => !/[\r\n]/.test(s));
const boundary = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=?]{1,70}$/),
  lineText(1).filter((s) => s.length <= 70),
);
const contentTypeFor = (b: string) =>
  fc.constantFrom(`multipart/form-data; boundary=${quoteParam(b)}`, `multipart/form-data; boundary=${b}`);

/** Bytes and pieces of multipart syntax mixed, so the fuzzer reaches past the first delimiter. */
const multipartish = (b: string) =>
  fc
    .array(
      fc.oneof(
        fc.constantFrom(`--${b}`, `--${b}--`, "\r\n", "\n", "\r", "--", " ", ":", ";", '"', "\\"),
        fc.constantFrom(
          'Content-Disposition: form-data; name="post.x"',
          "Content-Disposition: form-data; name=",
          "Content-Type: application/json; length=3",
          "Content-Length: 2",
          "content-disposition: form-data; filename=",
        ),
        fc.string({ maxLength: 10 }),
        fc.uint8Array({ maxLength: 10 }).map((u) => Buffer.from(u).toString("latin1")),
      ),
      { maxLength: 40 },
    )
    .map((pieces) => Buffer.from(pieces.join(""), "latin1"));

/** Parts parse(build(x)) must give back, content types made the way clients write them. */
const mediaType = fc.constantFrom("application/json", "image/png", "text/plain", "application/octet-stream");
const contentType = fc
  .tuple(mediaType, fc.option(fc.tuple(fc.constantFrom("charset", "x-y"), lineText()), { nil: undefined }))
  .map(([t, p]) => (p ? `${t}; ${p[0]}=${quoteParam(p[1])}` : t));
interface Sample {
  name: string;
  contentType: string;
  filename?: string;
  data: Uint8Array | string;
  /** The Content-Type as sent. */
  wire: string;
  headers: Record<string, string>;
}
const sample: fc.Arbitrary<Sample> = fc
  .tuple(
    lineText(1),
    contentType,
    fc.option(lineText(), { nil: undefined }),
    fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 100 })),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([name, contentType, filename, data, lengthParam, contentLength]): Sample => {
    const size = typeof data === "string" ? Buffer.byteLength(data) : data.length;
    return {
      name,
      contentType,
      filename,
      data,
      // The SDK's `; length=N` hint and a Content-Length header must both come back out transparently.
      wire: lengthParam ? `${contentType}; length=${size}` : contentType,
      headers: contentLength ? { "Content-Length": String(size) } : {},
    };
  });

const view = (p: { name: string; contentType: string; filename?: string; data: Uint8Array | string }) => ({
  name: p.name,
  contentType: p.contentType,
  filename: p.filename,
  data: Buffer.from(p.data),
});

/** Runs `fn` and allows only a MalformedBody to escape it. */
function parsesOrMalformed(fn: () => Part[]): void {
  try {
    for (const part of fn()) expect(Buffer.isBuffer(part.data)).toBe(true);
  } catch (err) {
    if (!(err instanceof MalformedBody)) throw err;
  }
}

describe("parseMultipart (fuzz)", () => {
  it("on arbitrary bytes returns parts or throws MalformedBody, never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 500 }), boundary, fc.string(), (bytes, b, ct) => {
        parsesOrMalformed(() =>
          parseMultipart(Buffer.from(bytes), `multipart/form-data; boundary=${quoteParam(b)}`),
        );
        parsesOrMalformed(() => parseMultipart(Buffer.from(bytes), ct));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("on near-multipart bodies returns parts or throws MalformedBody", () => {
    fc.assert(
      fc.property(
        boundary.chain((b) => fc.tuple(multipartish(b), contentTypeFor(b))),
        ([body, ct]) => parsesOrMalformed(() => parseMultipart(body, ct)),
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it("parse(build(parts)) gives back names, content types, filenames and bytes", () => {
    fc.assert(
      fc.property(
        fc.array(sample, { maxLength: 8 }),
        boundary,
        fc.string(),
        fc.string(),
        fc.boolean(),
        (parts, b, preamble, epilogue, gzip) => {
          let body: Buffer;
          try {
            body = buildMultipart(
              parts.map((p) => ({ ...p, contentType: p.wire })),
              b,
            );
          } catch (err) {
            // The random data happened to hold the delimiter: not a valid input.
            fc.pre(!(err instanceof RangeError));
            throw err;
          }
          // A preamble line must not itself look like a delimiter.
          fc.pre(!`\n${preamble}`.includes(`\n--${b}`));
          body = Buffer.concat([Buffer.from(`${preamble}\r\n`), body, Buffer.from(epilogue)]);
          if (gzip) body = decodeBody(zlib.gzipSync(body), { "content-encoding": "gzip" }, body.length);
          const ct = `multipart/form-data; boundary=${quoteParam(b)}`;
          expect(parseMultipart(body, ct).map(view)).toEqual(parts.map(view));
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe("decodeBody (fuzz)", () => {
  it("returns at most limit bytes or throws one of its three errors", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
          fc.uint8Array({ maxLength: 3000 }).map((u) => zlib.gzipSync(u)),
        ),
        fc.constantFrom("gzip", "x-gzip", "deflate", "br", "identity", "zstd", "gzip, gzip", ""),
        fc.nat(2000),
        (raw, coding, limit) => {
          try {
            expect(decodeBody(raw, { "content-encoding": coding }, limit).length).toBeLessThanOrEqual(limit);
          } catch (err) {
            const known = [BodyTooLarge, MalformedBody, UnsupportedEncoding].some((E) => err instanceof E);
            if (!known) throw err;
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe("groupRunParts (fuzz)", () => {
  const uuid = fc.uuid();
  const name = fc.oneof(
    fc.string(),
    fc
      .tuple(
        fc.constantFrom("post", "patch", "feedback", "attachment", "other"),
        fc.oneof(uuid, fc.string()),
        fc.option(fc.constantFrom("inputs", "outputs", "error", "events", "extra", "serialized", "x", "a.b")),
      )
      .map(([kind, id, field]) => (field === null ? `${kind}.${id}` : `${kind}.${id}.${field}`)),
  );
  const data = fc.oneof(
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
    fc.uint8Array({ maxLength: 50 }).map((u) => Buffer.from(u)),
    fc
      .constantFrom(`${"[".repeat(100_000)}${"]".repeat(100_000)}`, '{"__proto__":{"x":1}}', '{"id":1}')
      .map((s) => Buffer.from(s)),
  );
  const part = fc.record({ name, contentType: fc.string(), headers: fc.constant({}), data });

  it("never throws, and every error names a part it was given", () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 20 }), (parts) => {
        const g = groupRunParts(parts);
        const names = new Set(parts.map((p) => p.name));
        for (const e of g.errors) expect(names.has(e.part)).toBe(true);
        for (const [id, run] of [...g.posts, ...g.patches]) expect(run.id).toBe(id);
        expect(g.errors.length).toBeLessThanOrEqual(parts.length);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
