import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import { s3Authorizations, s3DeleteObjects } from "./s3-request.ts";

const s3DeleteKeys = (body: string) => s3DeleteObjects(body).map((o) => o.key);

// What AWS checks for each S3 call, path-style: the action on the object or bucket ARN.
const actions = (method: string, url: string, copy?: string) =>
  s3Authorizations(method, url, copy).authorizations.map((a) => `${a.action} ${a.resource}`);
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Refused);
    return (e as Refused).code;
  }
  return "accepted";
};

describe("S3 calls as IAM authorization requests", () => {
  it("object reads, writes and deletes on the object's ARN, its key decoded", () => {
    expect(actions("GET", "/b/checkpoints/t%2523d/x?x-id=GetObject")).toEqual([
      "s3:GetObject arn:aws:s3:::b/checkpoints/t%23d/x",
    ]);
    expect(actions("HEAD", "/b/k")).toEqual(["s3:GetObject arn:aws:s3:::b/k"]);
    expect(actions("PUT", "/b/a%20b/c")).toEqual(["s3:PutObject arn:aws:s3:::b/a b/c"]);
    expect(actions("DELETE", "/b/k")).toEqual(["s3:DeleteObject arn:aws:s3:::b/k"]);
  });

  it("multipart uploads are s3:PutObject; aborting one is s3:AbortMultipartUpload", () => {
    expect(actions("POST", "/b/k?uploads")).toEqual(["s3:PutObject arn:aws:s3:::b/k"]);
    expect(actions("PUT", "/b/k?partNumber=1&uploadId=u")).toEqual(["s3:PutObject arn:aws:s3:::b/k"]);
    expect(actions("POST", "/b/k?uploadId=u")).toEqual(["s3:PutObject arn:aws:s3:::b/k"]);
    expect(actions("DELETE", "/b/k?uploadId=u")).toEqual(["s3:AbortMultipartUpload arn:aws:s3:::b/k"]);
  });

  it("a copy needs s3:GetObject on its source as well", () => {
    expect(actions("PUT", "/b/to", "b/from%20x")).toEqual([
      "s3:PutObject arn:aws:s3:::b/to",
      "s3:GetObject arn:aws:s3:::b/from x",
    ]);
    expect(code(() => actions("PUT", "/b/to", "nokey"))).toBe("InvalidArgument");
  });

  it("bucket calls on the bucket's ARN, with the listing's prefix; DeleteObjects is read from its body", () => {
    expect(s3Authorizations("GET", "/b?list-type=2&prefix=checkpoints%2F").authorizations).toEqual([
      { action: "s3:ListBucket", resource: "arn:aws:s3:::b", context: { "s3:prefix": "checkpoints/" } },
    ]);
    // ListObjectVersions is its own action (s3:ListBucketVersions), with the same prefix condition key.
    expect(
      s3Authorizations("GET", "/b?versions&prefix=builds%2Fx%2F&key-marker=k&version-id-marker=v")
        .authorizations,
    ).toEqual([
      { action: "s3:ListBucketVersions", resource: "arn:aws:s3:::b", context: { "s3:prefix": "builds/x/" } },
    ]);
    expect(s3Authorizations("POST", "/b?delete").deleteObjects).toBe(true);
    expect(actions("GET", "/")).toEqual(["s3:ListAllMyBuckets *"]);
  });

  it("an unknown subresource, a dot segment or a bad escape is refused", () => {
    expect(code(() => actions("GET", "/b/k?torrent"))).toBe("AccessDenied");
    expect(code(() => actions("PUT", "/b/k?tagging&acl"))).toBe("AccessDenied");
    expect(code(() => actions("PUT", "/b/checkpoints/mine/../../other"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "/b/checkpoints/mine/%2e%2e/x"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "/b/%E0%A4%A"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "b/k"))).toBe("InvalidURI");
  });

  it("DeleteObjects names its keys in the body; any other XML form is refused", () => {
    const body =
      '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>1</VersionId></Object><Quiet>true</Quiet></Delete>';
    expect(s3DeleteObjects(body)).toEqual([
      { key: "a&b", versioned: false },
      { key: "c", versioned: true },
    ]);
    expect(code(() => s3DeleteKeys("<Delete><Object><Key><![CDATA[x]]></Key></Object></Delete>"))).toBe(
      "MalformedXML",
    );
    expect(
      code(() =>
        s3DeleteKeys('<!DOCTYPE x [<!ENTITY e "y">]><Delete><Object><Key>&e;</Key></Object></Delete>'),
      ),
    ).toBe("MalformedXML");
    expect(code(() => s3DeleteKeys("<Delete><Object><s3:Key>x</s3:Key></Object></Delete>"))).toBe(
      "MalformedXML",
    );
    expect(code(() => s3DeleteKeys("<Delete></Delete>"))).toBe("MalformedXML");
    // A version or a key outside an object, or twice in one, is no form S3 reads either.
    for (const bad of [
      "<Delete><VersionId>1</VersionId><Object><Key>x</Key></Object></Delete>",
      "<Delete><Object><Key>x</Key><Key>y</Key></Object></Delete>",
      "<Delete><Object><Key>x</Key><VersionId>1</VersionId><VersionId>2</VersionId></Object></Delete>",
      "<Delete><Object><Object><Key>x</Key></Object></Object></Delete>",
      "<Delete><Object><VersionId>1</VersionId></Object></Delete>",
      "<Delete><Object><Key>x</Key></Delete>",
    ])
      expect(
        code(() => s3DeleteKeys(bad)),
        bad,
      ).toBe("MalformedXML");
  });
});
