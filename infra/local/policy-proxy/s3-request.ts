import { type Authorization, Refused } from "./refusal.ts";
import { decode, queryOf } from "./sigv4.ts";

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

/** An object's ARN; a key with `.` or `..` segments is refused (s3rver keeps objects as files under their keys). */
export function objectArn(bucket: string, key: string): string {
  if (key.split("/").some((seg) => seg === "." || seg === "..") || key.includes("\\") || key.includes("\0"))
    throw new Refused(
      "InvalidURI",
      "Object keys with . or .. segments are not supported by the local cloud.",
      400,
    );
  return `arn:aws:s3:::${bucket}/${key}`;
}

/** The authorization requests of an S3 call, from its method, path, query and copy source header. */
export function s3Authorizations(method: string, url: string, copySource?: string | string[]): S3Call {
  if (!url.startsWith("/")) throw new Refused("InvalidURI", "Couldn't parse the specified URI.", 400);
  const path = url.split("?")[0];
  const query = queryOf(url);
  const slash = path.indexOf("/", 1);
  const bucket = decode(slash < 0 ? path.slice(1) : path.slice(1, slash));
  const key = slash < 0 ? "" : decode(path.slice(slash + 1));
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
    const source = decode(copySource.split("?")[0].replace(/^\//, ""));
    const at = source.indexOf("/");
    if (at <= 0 || at === source.length - 1)
      throw new Refused(
        "InvalidArgument",
        "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
        400,
      );
    authorizations.push({
      action: "s3:GetObject",
      resource: objectArn(source.slice(0, at), source.slice(at + 1)),
      context: {},
    });
  }
  return { bucket, key, authorizations, deleteObjects: false };
}

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

// The whole body must be made of these, so no key can hide from the check in a form S3's XML parser reads.
const DELETE_PARTS =
  /<\?xml[^<>]*\?>|<Delete(?: xmlns="[^"<>]*")?>|<\/Delete>|(<Object>)|(<\/Object>)|<Quiet>(?:true|false)<\/Quiet>|<VersionId>([^<>]*)<\/VersionId>|<Key>([^<>]*)<\/Key>|\s+/gy;

/** An object a DeleteObjects body names, and whether it names one version of it (s3:DeleteObjectVersion). */
export interface DeletedObject {
  key: string;
  versioned: boolean;
}

/**
 * The objects a DeleteObjects body names (`<Object><Key>…</Key>[<VersionId>…</VersionId>]</Object>`), XML
 * entities decoded; a refusal for any other form.
 */
export function s3DeleteObjects(body: string): DeletedObject[] {
  const out: DeletedObject[] = [];
  const malformed = () =>
    new Refused(
      "MalformedXML",
      "The XML you provided was not well-formed or did not validate against our published schema.",
      400,
    );
  let current: { key?: string; versioned: boolean } | undefined;
  DELETE_PARTS.lastIndex = 0;
  let end = 0;
  for (let m = DELETE_PARTS.exec(body); m; m = DELETE_PARTS.exec(body)) {
    end = DELETE_PARTS.lastIndex;
    if (m[1] !== undefined) {
      if (current) throw malformed();
      current = { versioned: false };
    } else if (m[2] !== undefined) {
      if (current?.key === undefined) throw malformed();
      out.push({ key: current.key, versioned: current.versioned });
      current = undefined;
    } else if (m[3] !== undefined) {
      if (!current || current.versioned) throw malformed();
      current.versioned = true;
    } else if (m[4] !== undefined) {
      if (!current || current.key !== undefined) throw malformed();
      current.key = unescapeXml(m[4]);
    }
  }
  if (end !== body.length || current || out.length === 0) throw malformed();
  return out;
}

const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|[a-z]+);/g, (whole, e: string) => {
    if (e.startsWith("#x")) return safeChar(Number.parseInt(e.slice(2), 16), whole);
    if (e.startsWith("#")) return safeChar(Number.parseInt(e.slice(1), 10), whole);
    const c = Object.hasOwn(XML_ENTITIES, e) ? XML_ENTITIES[e] : undefined;
    if (c === undefined) throw new Refused("MalformedXML", `Unknown XML entity &${e};`, 400);
    return c;
  });

const safeChar = (code: number, whole: string) =>
  code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
