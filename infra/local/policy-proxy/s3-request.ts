import { type Authorization, Refused } from "./refusal.ts";
import { checkedKey, checkedKeyText, checkedRawQuery, copySourceNames, pathNames } from "./s3-names.ts";
import { queryOf } from "./sigv4.ts";

// An S3 REST call (path-style: /<bucket>/<key>, as the platform's clients address the local cloud) as the IAM
// authorization requests AWS makes for it: its action on the object or the bucket.

export interface S3Call {
  bucket?: string;
  key?: string;
  /** Authorizations beyond the call's own (the copy source of CopyObject/UploadPartCopy). */
  authorizations: Authorization[];
  /**
   * DeleteObjects: its body lists the keys, each checked as s3:DeleteObject, or s3:DeleteObjectVersion where it
   * names a version (see s3DeleteObjects).
   */
  deleteObjects: boolean;
  /** CopyObject/UploadPartCopy: the object copied, as checked. */
  copySource?: { bucket: string; key: string };
}

const denied = () => new Refused("AccessDenied", "Access Denied", 403);

const OBJECT_SUBRESOURCE: Record<string, Record<string, string>> = {
  GET: {
    tagging: "s3:GetObjectTagging",
    acl: "s3:GetObjectAcl",
    uploadId: "s3:ListMultipartUploadParts",
    attributes: "s3:GetObjectAttributes",
  },
  HEAD: {},
  PUT: { tagging: "s3:PutObjectTagging", acl: "s3:PutObjectAcl", uploadId: "s3:PutObject" },
  POST: { uploads: "s3:PutObject", uploadId: "s3:PutObject" },
  DELETE: { tagging: "s3:DeleteObjectTagging", uploadId: "s3:AbortMultipartUpload" },
};
const OBJECT_ACTION: Record<string, string> = {
  GET: "s3:GetObject",
  HEAD: "s3:GetObject",
  PUT: "s3:PutObject",
  DELETE: "s3:DeleteObject",
};
// Query parameters that qualify a request rather than name a subresource.
const PLAIN = new Set([
  "partNumber",
  "versionId",
  "response-content-type",
  "response-content-disposition",
  "response-content-encoding",
  "response-content-language",
  "response-expires",
  "response-cache-control",
  "x-id",
]);

function objectAction(method: string, query: Record<string, unknown>): string {
  const subs = Object.keys(query).filter((k) => !PLAIN.has(k));
  if (subs.length === 0) {
    const action = OBJECT_ACTION[method];
    if (!action) throw denied();
    return action;
  }
  // Complete/upload part name both uploadId and (for UploadPart) partNumber: the subresource decides.
  const table = OBJECT_SUBRESOURCE[method] ?? {};
  const named = subs.filter((k) => Object.hasOwn(table, k));
  if (named.length !== 1 || subs.length !== 1) throw denied();
  return table[named[0]];
}

function bucketAction(
  method: string,
  query: Record<string, string | string[]>,
): { action: string; context: Record<string, string> } {
  const subs = Object.keys(query).filter(
    (k) =>
      ![
        "prefix",
        "delimiter",
        "max-keys",
        "marker",
        "continuation-token",
        "start-after",
        "list-type",
        "encoding-type",
        "fetch-owner",
        "x-id",
        "key-marker",
        "version-id-marker",
      ].includes(k),
  );
  const prefix = typeof query.prefix === "string" ? query.prefix : "";
  if (subs.length === 0 && (method === "GET" || method === "HEAD"))
    return { action: "s3:ListBucket", context: { "s3:prefix": prefix } };
  // ListObjectVersions: its own action, with the same s3:prefix condition key.
  if (method === "GET" && subs.length === 1 && subs[0] === "versions")
    return { action: "s3:ListBucketVersions", context: { "s3:prefix": prefix } };
  if (method === "POST" && subs.length === 1 && subs[0] === "delete")
    return { action: "s3:DeleteObject", context: {} };
  if (method === "GET" && subs.length === 1 && subs[0] === "uploads")
    return { action: "s3:ListBucketMultipartUploads", context: {} };
  if (method === "GET" && subs.length === 1 && subs[0] === "location")
    return { action: "s3:GetBucketLocation", context: {} };
  if (method === "PUT" && subs.length === 0) return { action: "s3:CreateBucket", context: {} };
  if (method === "DELETE" && subs.length === 0) return { action: "s3:DeleteBucket", context: {} };
  throw denied();
}

/** An object's ARN; a key s3rver could read as another (s3-names.ts) is refused. */
export function objectArn(bucket: string, key: string): string {
  return `arn:aws:s3:::${bucket}/${checkedKey(key)}`;
}

// Listing parameters that hold key text; response-* values become response headers.
const KEY_TEXT = ["prefix", "delimiter", "marker", "start-after", "key-marker"];

/** The query as s3rver's Koa reads it, its key texts and header overrides checked. */
function checkedQuery(url: string): Record<string, string> {
  checkedRawQuery(url);
  const query = queryOf(url) as Record<string, string>;
  for (const [name, value] of Object.entries(query)) {
    if (KEY_TEXT.includes(name) || name.startsWith("response-")) checkedKeyText(value);
    // s3rver keeps no versions: it would act on the current object, not the version named.
    if (name === "versionId")
      throw new Refused("InvalidArgument", "The local cloud keeps no object versions: no versionId.", 400);
  }
  return query;
}

/** The authorization requests of an S3 call, from its method, path, query and copy source header. */
export function s3Authorizations(method: string, url: string, copySource?: string | string[]): S3Call {
  if (!url.startsWith("/")) throw new Refused("InvalidURI", "Couldn't parse the specified URI.", 400);
  const query = checkedQuery(url);
  const { bucket, key } = pathNames(url.split("?")[0]);
  if (!bucket) {
    if (method !== "GET") throw denied();
    return {
      authorizations: [{ action: "s3:ListAllMyBuckets", resource: "*", context: {} }],
      deleteObjects: false,
    };
  }
  if (!key) {
    const { action, context } = bucketAction(method, query);
    const deleteObjects = action === "s3:DeleteObject";
    return {
      bucket,
      authorizations: deleteObjects ? [] : [{ action, resource: `arn:aws:s3:::${bucket}`, context }],
      deleteObjects,
    };
  }
  const action = objectAction(method, query);
  const authorizations: Authorization[] = [{ action, resource: objectArn(bucket, key), context: {} }];
  if (copySource !== undefined && method === "PUT") {
    if (typeof copySource !== "string") throw denied();
    const source = copySourceNames(copySource);
    authorizations.push({
      action: "s3:GetObject",
      resource: objectArn(source.bucket, source.key),
      context: {},
    });
    return { bucket, key, authorizations, deleteObjects: false, copySource: source };
  }
  return { bucket, key, authorizations, deleteObjects: false };
}

// The whole body must be made of these, so no key can hide from the check in a form S3's XML parser reads.
const DELETE_PARTS =
  /<\?xml[^<>]*\?>|<Delete(?: xmlns="[^"<>]*")?>|<\/Delete>|(<Object>)|(<\/Object>)|<Quiet>(?:true|false)<\/Quiet>|(<VersionId>)[^<>]*<\/VersionId>|<Key>([^<>]*)<\/Key>|\s+/gy;

/** An object a DeleteObjects body names; `versioned` is always false (a VersionId is refused: s3rver keeps none). */
export interface DeletedObject {
  key: string;
  versioned: boolean;
}

const malformed = (why: string) =>
  new Refused(
    "MalformedXML",
    `The XML you provided was not well-formed or did not validate against our published schema (${why}).`,
    400,
  );

/**
 * The objects a DeleteObjects body names (`<Object><Key>…</Key></Object>`), each key read as s3rver's XML parser
 * reads it or refused; a refusal for any other form.
 */
export function s3DeleteObjects(body: string): DeletedObject[] {
  const out: DeletedObject[] = [];
  let current: { key?: string } | undefined;
  DELETE_PARTS.lastIndex = 0;
  let end = 0;
  for (let m = DELETE_PARTS.exec(body); m; m = DELETE_PARTS.exec(body)) {
    end = DELETE_PARTS.lastIndex;
    if (m[1] !== undefined) {
      if (current) throw malformed("an Object inside an Object");
      current = {};
    } else if (m[2] !== undefined) {
      if (current?.key === undefined) throw malformed("an Object without its Key");
      out.push({ key: current.key, versioned: false });
      current = undefined;
    } else if (m[3] !== undefined) {
      throw new Refused("InvalidArgument", "The local cloud keeps no object versions: no VersionId.", 400);
    } else if (m[4] !== undefined) {
      if (!current || current.key !== undefined) throw malformed("a Key outside an Object or twice in one");
      current.key = deletedKey(m[4]);
    }
  }
  if (end !== body.length || current || out.length === 0) throw malformed("not a Delete of Objects");
  return out;
}

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const REFERENCE = /&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/y;
// fast-xml-parser turns these values into numbers or booleans (strnum, hex and leading zeros on).
const PARSED_AS_VALUE = /^(?:true|false|[-+]?(?:0x[0-9a-f]+|[0-9]*(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?))$/i;

/**
 * A Key element's text as s3rver reads it (trimmed, then he.decode, then number parsing); refused where that
 * reading could differ from XML's: untrimmed text, a `&` that is not one of XML's references, a reference he
 * maps to another character, or a value parsed as a number or boolean.
 */
function deletedKey(raw: string): string {
  if (raw.trim() !== raw) throw malformed("a Key with leading or trailing white space");
  let key = "";
  for (let i = 0; i < raw.length; ) {
    if (raw[i] !== "&") {
      key += raw[i++];
      continue;
    }
    REFERENCE.lastIndex = i;
    const m = REFERENCE.exec(raw);
    if (!m) throw malformed("a & that starts no character reference");
    key += referenced(m[1]);
    i = REFERENCE.lastIndex;
  }
  if (!key || PARSED_AS_VALUE.test(key.trim())) throw malformed("a Key that is empty, a number or a boolean");
  return key;
}

function referenced(e: string): string {
  if (!e.startsWith("#")) {
    const c = Object.hasOwn(XML_ENTITIES, e) ? XML_ENTITIES[e] : undefined;
    if (c === undefined) throw malformed(`unknown entity &${e};`);
    return c;
  }
  const code = e.startsWith("#x") ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
  // he.decode maps NUL, C1 controls, surrogates and code points past Unicode to other characters.
  if (code === 0 || (code >= 0x80 && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
    throw malformed(`character reference &${e}; is not a character a key may hold`);
  return String.fromCodePoint(code);
}
