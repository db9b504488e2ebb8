import { Refused } from "./refusal.ts";
import { decode } from "./sigv4.ts";

// S3 names as the proxy reads them, each refused where s3rver (node_modules/s3rver/lib) could read it otherwise.
// s3rver routes on the raw path (parseurl: a `#` ends it), decodes each route parameter once, keeps an object as
// files under path.join(root, bucket, ...key.split("/")) (so `.`, `..` and empty segments resolve or alias), reads
// a copy source with decodeURI (reserved escapes stay encoded, `?versionId=` stays in the key) and a DeleteObjects
// body with fast-xml-parser and he.decode (values trimmed, HTML entities, numbers and booleans parsed).

/** S3's limit on a key's UTF-8 length. */
const MAX_KEY_BYTES = 1024;
/** A file name's limit (255 bytes) less s3rver's longest suffix (`._S3rver_metadata.json`). */
const MAX_SEGMENT_BYTES = 233;
// Controls (C0, DEL, C1) and unpaired surrogates: HTTP, XML, UTF-8 and file names each read them their own way.
const CONTROL = /[\p{Cc}\p{Cs}]/u;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
// Raw forms whose reading depends on the reader: a fragment, a backslash, encoded `/` and `\`.
const RAW_AMBIGUOUS = /[#\\]|%2f|%5c/i;

const invalidUri = (why: string) =>
  new Refused("InvalidURI", `Couldn't parse the specified URI: ${why}.`, 400);

/** A bucket name as S3 allows it (no `..`, no other form s3rver would join as a path). */
export function checkedBucket(name: string): string {
  if (!BUCKET.test(name) || name.includes(".."))
    throw new Refused("InvalidBucketName", "The specified bucket is not valid.", 400);
  return name;
}

/** A decoded object key, refused where s3rver's file layout could read it as another key or fail on it. */
export function checkedKey(key: string): string {
  if (Buffer.byteLength(key) > MAX_KEY_BYTES)
    throw new Refused("KeyTooLongError", "Your key is too long", 400);
  if (CONTROL.test(key)) throw invalidUri("control or unpaired surrogate characters");
  if (key.includes("\\")) throw invalidUri("backslashes in keys are not supported by the local cloud");
  const segments = key.split("/");
  segments.forEach((seg, i) => {
    if (seg === "." || seg === "..")
      throw new Refused(
        "InvalidURI",
        "Object keys with . or .. segments are not supported by the local cloud.",
        400,
      );
    // A trailing slash names a folder object; an empty segment elsewhere aliases the key without it.
    if (seg === "" && i !== segments.length - 1) throw invalidUri("empty key segments (// or a leading /)");
    if (seg.includes("._S3rver_")) throw invalidUri("s3rver's own file suffix in a key");
    if (Buffer.byteLength(seg) > MAX_SEGMENT_BYTES)
      throw new Refused("KeyTooLongError", `A key segment is longer than ${MAX_SEGMENT_BYTES} bytes`, 400);
  });
  return key;
}

/** A listing's prefix, marker or delimiter: any text a key may hold, checked as text (it names no file). */
export function checkedKeyText(text: string): string {
  if (Buffer.byteLength(text) > MAX_KEY_BYTES)
    throw new Refused("KeyTooLongError", "Your key is too long", 400);
  if (CONTROL.test(text)) throw invalidUri("control or unpaired surrogate characters");
  if (text.includes("\\")) throw invalidUri("backslashes in keys are not supported by the local cloud");
  return text;
}

/** The bucket and key a path-style request path names, decoded once as s3rver's router decodes them. */
export function pathNames(path: string): { bucket: string; key: string } {
  if (RAW_AMBIGUOUS.test(path)) throw invalidUri("#, \\, %2F or %5C in the path");
  const slash = path.indexOf("/", 1);
  const bucket = decode(slash < 0 ? path.slice(1) : path.slice(1, slash));
  const key = slash < 0 ? "" : decode(path.slice(slash + 1));
  if (!bucket && path !== "/") throw invalidUri("no bucket before the key");
  return { bucket: bucket && checkedBucket(bucket), key: key && checkedKey(key) };
}

/**
 * The query of a request, raw: refused where Koa's querystring.parse reads it otherwise than the proxy (`+` as a
 * space, a repeated name as a list, names past the 1000th dropped).
 */
export function checkedRawQuery(url: string): void {
  const q = url.indexOf("?");
  if (q < 0) return;
  const raw = url.slice(q + 1);
  if (/[+#]/.test(raw)) throw invalidUri("+ or # in the query (encode them: %2B, %23)");
  const names = raw
    .split("&")
    .filter(Boolean)
    .map((p) => decode(p.split("=")[0]));
  if (new Set(names).size !== names.length) throw invalidUri("a query parameter given twice");
}

const badCopySource = () =>
  new Refused(
    "InvalidArgument",
    "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
    400,
  );

/**
 * The bucket and key of an `x-amz-copy-source` (`[/]bucket/key[?versionId=…]`, URL-encoded), decoded once as S3
 * decodes it; refused where s3rver (decodeURI, no version suffix) would read another name.
 */
export function copySourceNames(header: string): { bucket: string; key: string } {
  const q = header.indexOf("?");
  // s3rver keeps no versions and would read `?versionId=…` as part of the key.
  if (q >= 0)
    throw new Refused(
      "InvalidArgument",
      "The local cloud keeps no object versions: a copy source takes no ?versionId.",
      400,
    );
  const raw = header.startsWith("/") ? header.slice(1) : header;
  if (RAW_AMBIGUOUS.test(raw)) throw invalidUri("#, \\, %2F or %5C in the copy source");
  const source = decode(raw);
  let uri: string;
  try {
    uri = decodeURI(raw);
  } catch {
    throw badCopySource();
  }
  // decodeURI keeps escapes of reserved characters (%3F, %26, …): s3rver would look for another key.
  if (uri !== source) throw invalidUri("escaped reserved characters in the copy source");
  const at = source.indexOf("/");
  if (at <= 0 || at === source.length - 1) throw badCopySource();
  return { bucket: checkedBucket(source.slice(0, at)), key: checkedKey(source.slice(at + 1)) };
}
