import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { fastestMatchMs } from "../../test/helpers/match-time.ts";
import { BodyTooLarge, decodeBody, MalformedBody, UnsupportedEncoding } from "./body.ts";
import { buildMultipart, type Part, parseMultipart } from "./multipart.ts";
import { groupRunParts } from "./parts.ts";

const MB = 1024 * 1024;
const RUN_ID = "0b9f5f7e-3c1a-4d8e-9a51-6f2c7d1e4b10";
const CT = "multipart/form-data; boundary=XyZ";

/** Asserts a MalformedBody whose message matches, and returns it for further checks. */
function malformed(fn: () => unknown, message: RegExp): MalformedBody {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(MalformedBody);
    expect((err as Error).message).toMatch(message);
    return err as MalformedBody;
  }
  throw new Error("expected MalformedBody, nothing was thrown");
}

/** A hand-written body: `\n` in the template becomes the given line end. */
const body = (text: string, eol = "\r\n") => Buffer.from(text.replaceAll("\n", eol));
const summary = (parts: Part[]) =>
  parts.map((p) => ({
    name: p.name,
    contentType: p.contentType,
    filename: p.filename,
    data: p.data.toString(),
  }));

/** What the LangSmith JS SDK sends: one Blob per part, typed `application/json; length=N`. */
async function langsmithLikeBody() {
  const run = JSON.stringify({
    id: RUN_ID,
    name: "chain",
    run_type: "chain",
    trace_id: RUN_ID,
    dotted_order: "1",
  });
  const json = (s: string) => new Blob([s], { type: `application/json; length=${Buffer.byteLength(s)}` });
  const form = new FormData();
  form.append(`post.${RUN_ID}`, json(run));
  form.append(`post.${RUN_ID}.inputs`, json('{"question":"héllo\\r\\n--XyZ"}'));
  form.append(`post.${RUN_ID}.error`, json('"boom"'));
  form.append(
    `attachment.${RUN_ID}.image`,
    new Blob([new Uint8Array([0, 13, 10, 255])], { type: "image/png" }),
  );
  const res = new Response(form);
  return { contentType: res.headers.get("content-type")!, raw: Buffer.from(await res.arrayBuffer()) };
}

describe("decodeBody", () => {
  const text = Buffer.from("hello multipart ".repeat(100));

  it("returns the body as is without Content-Encoding or with identity", () => {
    expect(decodeBody(text, {}, MB)).toBe(text);
    expect(decodeBody(text, { "content-encoding": "identity" }, MB)).toBe(text);
  });

  it("gunzips gzip and x-gzip, whatever the header's case", () => {
    const gz = zlib.gzipSync(text);
    expect(decodeBody(gz, { "content-encoding": "gzip" }, MB)).toEqual(text);
    expect(decodeBody(gz, { "Content-Encoding": "X-GZIP" }, MB)).toEqual(text);
  });

  it("inflates deflate, zlib-wrapped or raw, and brotli", () => {
    expect(decodeBody(zlib.deflateSync(text), { "content-encoding": "deflate" }, MB)).toEqual(text);
    expect(decodeBody(zlib.deflateRawSync(text), { "content-encoding": "deflate" }, MB)).toEqual(text);
    expect(decodeBody(zlib.brotliCompressSync(text), { "content-encoding": "br" }, MB)).toEqual(text);
  });

  it("undoes stacked codings last first", () => {
    const twice = zlib.gzipSync(zlib.deflateSync(text));
    expect(decodeBody(twice, { "content-encoding": "deflate, gzip" }, MB)).toEqual(text);
  });

  it("refuses zstd and unknown codings with UnsupportedEncoding (415)", () => {
    for (const coding of ["zstd", "compress", "gzip, zstd"]) {
      const err = (() => {
        try {
          decodeBody(text, { "content-encoding": coding }, MB);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(UnsupportedEncoding);
      expect((err as UnsupportedEncoding).status).toBe(415);
    }
    expect(() => decodeBody(text, { "content-encoding": "zstd" }, MB)).toThrow(/zstd/);
  });

  it("refuses a gzip bomb (50 MB of zeros, limit 1 MB) without inflating it", () => {
    const bomb = zlib.gzipSync(Buffer.alloc(50 * MB));
    expect(bomb.length).toBeLessThan(MB);
    const refuse = () =>
      expect(() => decodeBody(bomb, { "content-encoding": "gzip" }, MB)).toThrow(BodyTooLarge);
    expect(fastestMatchMs(refuse, 500)).toBeLessThan(500);
  });

  it("allows exactly the limit and refuses one byte more, compressed or not", () => {
    const exact = Buffer.alloc(1000, 1);
    expect(decodeBody(zlib.gzipSync(exact), { "content-encoding": "gzip" }, 1000)).toEqual(exact);
    expect(() => decodeBody(zlib.gzipSync(exact), { "content-encoding": "gzip" }, 999)).toThrow(BodyTooLarge);
    expect(() => decodeBody(exact, {}, 999)).toThrow(/limit of 999 bytes/);
  });

  it("reports corrupt or truncated gzip as MalformedBody (400)", () => {
    const gz = zlib.gzipSync(text);
    malformed(
      () => decodeBody(Buffer.from("not gzip at all"), { "content-encoding": "gzip" }, MB),
      /Corrupt gzip/,
    );
    malformed(() => decodeBody(gz.subarray(0, gz.length - 5), { "content-encoding": "gzip" }, MB), /gzip/);
    const flipped = Buffer.from(gz);
    flipped[20] ^= 0xff;
    const err = malformed(() => decodeBody(flipped, { "content-encoding": "gzip" }, MB), /Corrupt gzip/);
    expect(err.status).toBe(400);
  });
});

describe("parseMultipart", () => {
  it("reads a body built like the LangSmith SDK's, through FormData and Response", async () => {
    const { contentType, raw } = await langsmithLikeBody();
    const parts = parseMultipart(raw, contentType);
    expect(parts.map((p) => [p.name, p.contentType])).toEqual([
      [`post.${RUN_ID}`, "application/json"],
      [`post.${RUN_ID}.inputs`, "application/json"],
      [`post.${RUN_ID}.error`, "application/json"],
      [`attachment.${RUN_ID}.image`, "image/png"],
    ]);
    expect(parts[1].headers["content-type"]).toMatch(/; length=\d+$/);
    expect(parts[3].data).toEqual(Buffer.from([0, 13, 10, 255]));
    const grouped = groupRunParts(parts);
    expect(grouped.errors).toEqual([]);
    expect(grouped.posts.get(RUN_ID)).toMatchObject({
      name: "chain",
      inputs: { question: "héllo\r\n--XyZ" },
    });
    expect(grouped.posts.get(RUN_ID)?.error).toBe("boom");
  });

  it("reads gzip-compressed multipart after decodeBody", async () => {
    const { contentType, raw } = await langsmithLikeBody();
    const decoded = decodeBody(zlib.gzipSync(raw), { "content-encoding": "gzip" }, MB);
    expect(summary(parseMultipart(decoded, contentType))).toEqual(summary(parseMultipart(raw, contentType)));
  });

  it("round-trips buildMultipart, the SDK's manual framing", () => {
    const raw = buildMultipart(
      [
        { name: "a", contentType: "application/json; length=2", data: "{}" },
        {
          name: "b",
          filename: "f.bin",
          contentType: "application/octet-stream",
          data: new Uint8Array([1, 2]),
        },
      ],
      "----LangSmithFormBoundaryabc",
    );
    expect(
      summary(parseMultipart(raw, "multipart/form-data; boundary=----LangSmithFormBoundaryabc")),
    ).toEqual([
      { name: "a", contentType: "application/json", filename: undefined, data: "{}" },
      { name: "b", contentType: "application/octet-stream", filename: "f.bin", data: "\u0001\u0002" },
    ]);
  });

  it("accepts bare LF line ends", () => {
    const raw = body('--XyZ\nContent-Disposition: form-data; name="a"\n\nline1\nline2\n--XyZ--\n', "\n");
    expect(summary(parseMultipart(raw, CT))).toEqual([
      { name: "a", contentType: "text/plain", filename: undefined, data: "line1\nline2" },
    ]);
  });

  it("takes a quoted boundary, with any case in the media type and parameter name", () => {
    const raw = body('--a b:c\nContent-Disposition: form-data; name="x"\n\n1\n--a b:c--');
    expect(parseMultipart(raw, 'Multipart/Form-Data; charset=utf-8; BOUNDARY="a b:c"')[0].name).toBe("x");
  });

  it("ignores the preamble and the epilogue, and padding after a boundary", () => {
    const raw = body(
      'preamble --XyZ not a delimiter\n--XyZ  \t\nContent-Disposition: form-data; name="a"\n\nv\n--XyZ-- \nepilogue\n--XyZ\ngarbage',
    );
    expect(summary(parseMultipart(raw, CT))).toEqual([
      { name: "a", contentType: "text/plain", filename: undefined, data: "v" },
    ]);
  });

  it("unescapes quoted names and filenames and accepts unquoted tokens", () => {
    const raw = body(
      '--XyZ\nContent-Disposition: form-data; name="say \\"hi\\" \\\\ ;x"; filename="a\\"b.txt"\n\n1\n' +
        "--XyZ\ncontent-disposition: FORM-DATA ; Name = plain.token\n\n2\n--XyZ--",
    );
    const [a, b] = parseMultipart(raw, CT);
    expect([a.name, a.filename, b.name]).toEqual(['say "hi" \\ ;x', 'a"b.txt', "plain.token"]);
  });

  it("drops the informational length parameter from the content type, keeping the rest", () => {
    const raw = body(
      '--XyZ\nContent-Disposition: form-data; name="a"\nContent-Type: text/plain; length=999; charset=utf-8\n\nx\n--XyZ--',
    );
    const [part] = parseMultipart(raw, CT);
    expect(part.contentType).toBe("text/plain; charset=utf-8");
    expect(part.headers["content-type"]).toBe("text/plain; length=999; charset=utf-8");
  });

  it("checks Content-Length against the data and lower-cases header names", () => {
    const ok = body(
      '--XyZ\nContent-Disposition: form-data; name="a"\nCONTENT-LENGTH: 3\nX-Folded: a\n  b\n\nabc\n--XyZ--',
    );
    expect(parseMultipart(ok, CT)[0].headers).toEqual({
      "content-disposition": 'form-data; name="a"',
      "content-length": "3",
      "x-folded": "a b",
    });
    const bad = body('--XyZ\nContent-Disposition: form-data; name="a"\nContent-Length: 4\n\nabc\n--XyZ--');
    expect(malformed(() => parseMultipart(bad, CT), /part 0: Content-Length 4 .* 3 bytes/).partIndex).toBe(0);
  });

  it("keeps data bytes exactly: CR/LF, dashes, boundary text not at a line start, empty data", () => {
    const data = Buffer.from("\r\n-- --XyZ x--XyZ\r\r\n\n\r");
    const raw = Buffer.concat([
      body('--XyZ\nContent-Disposition: form-data; name="a"\n\n'),
      data,
      body('\n--XyZ\nContent-Disposition: form-data; name="empty"\n\n\n--XyZ--'),
    ]);
    const [a, empty] = parseMultipart(raw, CT);
    expect(a.data).toEqual(data);
    expect(empty.data.length).toBe(0);
  });

  it("accepts a part whose header block ends with the part (no body, RFC 2046)", () => {
    const raw = body('--XyZ\nContent-Disposition: form-data; name="a"\n\n--XyZ--');
    expect(parseMultipart(raw, CT)[0].data.length).toBe(0);
  });

  it("returns no parts for a body that is only the close delimiter", () => {
    expect(parseMultipart(body("--XyZ--\n"), CT)).toEqual([]);
  });

  it("returns views into the body rather than copies", () => {
    const raw = buildMultipart([{ name: "a", data: "x".repeat(1000) }], "b");
    expect(parseMultipart(raw, "multipart/form-data; boundary=b")[0].data.buffer).toBe(raw.buffer);
  });

  it("parses tens of MB in one pass: one 40 MB part, and 100k small parts", () => {
    const big = Buffer.alloc(40 * MB, "a");
    for (let i = 0; i < big.length; i += 1000) big[i] = 0x0a; // many line starts, none a delimiter
    const raw = buildMultipart([{ name: "big", contentType: "application/json", data: big }], "bnd");
    let t0 = performance.now();
    expect(parseMultipart(raw, "multipart/form-data; boundary=bnd")[0].data.length).toBe(big.length);
    expect(performance.now() - t0).toBeLessThan(2000);
    const many = buildMultipart(
      Array.from({ length: 100_000 }, (_, i) => ({
        name: `p${i}`,
        contentType: "application/json",
        data: "{}",
      })),
      "bnd",
    );
    t0 = performance.now();
    expect(parseMultipart(many, "multipart/form-data; boundary=bnd")).toHaveLength(100_000);
    expect(performance.now() - t0).toBeLessThan(6000);
  });
});

describe("parseMultipart refuses malformed bodies with MalformedBody", () => {
  const ok = 'Content-Disposition: form-data; name="a"\n\nv\n';

  it("a content type that is not multipart/form-data", () => {
    malformed(() => parseMultipart(body(`--XyZ\n${ok}--XyZ--`), "application/json"), /multipart\/form-data/);
    malformed(() => parseMultipart(body(`--XyZ\n${ok}--XyZ--`), ""), /multipart\/form-data/);
  });

  it("no boundary parameter, or an empty or ambiguous one", () => {
    malformed(() => parseMultipart(body("x"), "multipart/form-data"), /no boundary parameter/);
    malformed(() => parseMultipart(body("x"), 'multipart/form-data; boundary=""'), /no boundary parameter/);
    malformed(() => parseMultipart(body("x"), "multipart/form-data; boundary=a; boundary=b"), /2 times/);
    malformed(() => parseMultipart(body("x"), 'multipart/form-data; boundary="abc'), /unterminated/);
  });

  it("a body without the boundary", () => {
    malformed(
      () => parseMultipart(body(`--Other\n${ok}--Other--`), CT),
      /does not contain the boundary "--XyZ"/,
    );
    malformed(() => parseMultipart(Buffer.alloc(0), CT), /does not contain the boundary/);
  });

  it("a missing closing delimiter", () => {
    const err = malformed(
      () => parseMultipart(body(`--XyZ\n${ok}--XyZ\n${ok}`), CT),
      /part 1 is not followed/,
    );
    expect(err.partIndex).toBe(1);
    malformed(() => parseMultipart(body(`--XyZ\n${ok}--XyZ\n`), CT), /ends without the closing delimiter/);
    malformed(() => parseMultipart(body(`--XyZ\n${ok}--XyZ`), CT), /unexpected bytes/);
  });

  it("bytes after a boundary on its line", () => {
    malformed(
      () => parseMultipart(body(`--XyZ\n${ok}--XyZZ\n${ok}--XyZ--`), CT),
      /before part 1 .*unexpected/,
    );
  });

  it("a part without a name", () => {
    const err = malformed(
      () => parseMultipart(body(`--XyZ\n${ok}--XyZ\nContent-Disposition: form-data\n\nv\n--XyZ--`), CT),
      /part 1: Content-Disposition has no name/,
    );
    expect(err.partIndex).toBe(1);
    malformed(
      () => parseMultipart(body('--XyZ\nContent-Disposition: form-data; name=""\n\nv\n--XyZ--'), CT),
      /no name/,
    );
    malformed(
      () => parseMultipart(body("--XyZ\nContent-Type: text/plain\n\nv\n--XyZ--"), CT),
      /no Content-Disposition/,
    );
  });

  it("a Content-Disposition that is not form-data or does not parse", () => {
    malformed(
      () => parseMultipart(body('--XyZ\nContent-Disposition: attachment; name="a"\n\n\n--XyZ--'), CT),
      /not form-data/,
    );
    malformed(
      () => parseMultipart(body('--XyZ\nContent-Disposition: form-data; name="a\n\n\n--XyZ--'), CT),
      /unterminated/,
    );
    malformed(
      () => parseMultipart(body("--XyZ\nContent-Disposition: form-data; name\n\n\n--XyZ--"), CT),
      /no value/,
    );
    malformed(
      () => parseMultipart(body("--XyZ\nContent-Disposition: form-data; name=a; name=b\n\n\n--XyZ--"), CT),
      /2 times/,
    );
  });

  it("a header block without an end", () => {
    const err = malformed(
      () => parseMultipart(body(`--XyZ\n${ok}--XyZ\nContent-Disposition: form-data; name="b"\n--XyZ--`), CT),
      /part 1: header block has no end/,
    );
    expect(err.partIndex).toBe(1);
    const huge = `--XyZ\n${"X-Pad: y\n".repeat(10_000)}\nv\n--XyZ--`;
    malformed(() => parseMultipart(body(huge), CT), /header block is longer than/);
  });

  it("a header line without a colon, a leading continuation line, duplicated headers", () => {
    malformed(() => parseMultipart(body(`--XyZ\nnot a header\n${ok}--XyZ--`), CT), /without a name and ':'/);
    malformed(() => parseMultipart(body(`--XyZ\n  folded\n${ok}--XyZ--`), CT), /continuation/);
    malformed(
      () => parseMultipart(body(`--XyZ\nContent-Disposition: form-data; name="b"\n${ok}--XyZ--`), CT),
      /content-disposition header given twice/,
    );
  });

  it("an empty part between two delimiters", () => {
    malformed(() => parseMultipart(body(`--XyZ\n--XyZ\n${ok}--XyZ--`), CT), /part 0 is empty/);
  });
});
