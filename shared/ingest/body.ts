import { constants as bufferConstants } from "node:buffer";
import zlib from "node:zlib";
import { BodyTooLarge, MalformedBody, UnsupportedEncoding } from "../errors.ts";

export { BodyTooLarge, MalformedBody, UnsupportedEncoding };

type Inflate = (buf: Buffer, opts: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer;

/** HTTP "deflate" is zlib-wrapped (RFC 9110), but some clients send raw deflate: the header tells them apart. */
const inflateEither: Inflate = (buf, opts) => {
  const zlibWrapped = buf.length >= 2 && (buf[0] & 0x0f) === 8 && ((buf[0] << 8) | buf[1]) % 31 === 0;
  return zlibWrapped ? zlib.inflateSync(buf, opts) : zlib.inflateRawSync(buf, opts);
};

const MAX_CODINGS = 3;

const DECODERS: Record<string, Inflate | null> = {
  identity: null,
  gzip: zlib.gunzipSync,
  "x-gzip": zlib.gunzipSync,
  deflate: inflateEither,
  br: zlib.brotliDecompressSync,
};

/** Header lookup that does not trust the caller to have lower-cased the names. */
function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  if (headers[name] !== undefined) return headers[name];
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/**
 * The request body as the handler should read it: Content-Encoding undone, at most `limitBytes` long.
 * Decompression stops as soon as the output passes the limit, so a small bomb never allocates its full size.
 */
export function decodeBody(
  raw: Buffer,
  headers: Record<string, string | undefined>,
  limitBytes: number,
): Buffer {
  if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) throw new RangeError(`limitBytes: ${limitBytes}`);
  const codings = (header(headers, "content-encoding") ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "");
  for (const c of codings) if (!Object.hasOwn(DECODERS, c)) throw new UnsupportedEncoding(c);
  // Each layer is capped, but a long chain would still multiply the work; real clients use one.
  if (codings.length > MAX_CODINGS) throw new MalformedBody(`Too many content codings (${codings.length})`);
  let body = raw;
  // Codings are listed in the order they were applied, so they come off last first.
  for (const c of codings.reverse()) {
    const decode = DECODERS[c];
    if (!decode || body.length === 0) continue;
    body = inflate(decode, c, body, limitBytes);
  }
  if (body.length > limitBytes) throw new BodyTooLarge(limitBytes);
  return body;
}

function inflate(decode: Inflate, coding: string, body: Buffer, limitBytes: number): Buffer {
  try {
    // zlib takes a cap from 1 to the largest Buffer; the length check after catches the rest.
    const maxOutputLength = Math.min(Math.max(1, limitBytes), bufferConstants.MAX_LENGTH);
    return decode(body, { maxOutputLength });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw new BodyTooLarge(limitBytes);
    // Every other zlib/brotli failure (Z_DATA_ERROR, Z_BUF_ERROR, ERR__ERROR_FORMAT_*) is about the bytes.
    if (typeof code === "string") {
      throw new MalformedBody(`Corrupt ${coding} body: ${(err as Error).message}`);
    }
    throw err;
  }
}
