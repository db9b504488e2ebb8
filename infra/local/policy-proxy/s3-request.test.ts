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
    expect(actions("GET", "/bkt/checkpoints/t%2523d/x?x-id=GetObject")).toEqual([
      "s3:GetObject arn:aws:s3:::bkt/checkpoints/t%23d/x",
    ]);
    expect(actions("HEAD", "/bkt/k")).toEqual(["s3:GetObject arn:aws:s3:::bkt/k"]);
    expect(actions("PUT", "/bkt/a%20b/c")).toEqual(["s3:PutObject arn:aws:s3:::bkt/a b/c"]);
    expect(actions("DELETE", "/bkt/k")).toEqual(["s3:DeleteObject arn:aws:s3:::bkt/k"]);
  });

  it("multipart uploads are s3:PutObject; aborting one is s3:AbortMultipartUpload", () => {
    expect(actions("POST", "/bkt/k?uploads")).toEqual(["s3:PutObject arn:aws:s3:::bkt/k"]);
    expect(actions("PUT", "/bkt/k?partNumber=1&uploadId=u")).toEqual(["s3:PutObject arn:aws:s3:::bkt/k"]);
    expect(actions("POST", "/bkt/k?uploadId=u")).toEqual(["s3:PutObject arn:aws:s3:::bkt/k"]);
    expect(actions("DELETE", "/bkt/k?uploadId=u")).toEqual(["s3:AbortMultipartUpload arn:aws:s3:::bkt/k"]);
  });

  it("a copy needs s3:GetObject on its source as well", () => {
    expect(actions("PUT", "/bkt/to", "bkt/from%20x")).toEqual([
      "s3:PutObject arn:aws:s3:::bkt/to",
      "s3:GetObject arn:aws:s3:::bkt/from x",
    ]);
    expect(code(() => actions("PUT", "/bkt/to", "nokey"))).toBe("InvalidArgument");
  });

  it("bucket calls on the bucket's ARN, with the listing's prefix; DeleteObjects is read from its body", () => {
    expect(s3Authorizations("GET", "/bkt?list-type=2&prefix=checkpoints%2F").authorizations).toEqual([
      { action: "s3:ListBucket", resource: "arn:aws:s3:::bkt", context: { "s3:prefix": "checkpoints/" } },
    ]);
    // ListObjectVersions is its own action (s3:ListBucketVersions), with the same prefix condition key.
    expect(
      s3Authorizations("GET", "/bkt?versions&prefix=builds%2Fx%2F&key-marker=k&version-id-marker=v")
        .authorizations,
    ).toEqual([
      {
        action: "s3:ListBucketVersions",
        resource: "arn:aws:s3:::bkt",
        context: { "s3:prefix": "builds/x/" },
      },
    ]);
    expect(s3Authorizations("POST", "/bkt?delete").deleteObjects).toBe(true);
    expect(actions("GET", "/")).toEqual(["s3:ListAllMyBuckets *"]);
  });

  it("an unknown subresource, a dot segment or a bad escape is refused", () => {
    expect(code(() => actions("GET", "/bkt/k?torrent"))).toBe("AccessDenied");
    expect(code(() => actions("PUT", "/bkt/k?tagging&acl"))).toBe("AccessDenied");
    expect(code(() => actions("PUT", "/bkt/checkpoints/mine/../../other"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "/bkt/checkpoints/mine/%2e%2e/x"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "/bkt/%E0%A4%A"))).toBe("InvalidURI");
    expect(code(() => actions("GET", "bkt/k"))).toBe("InvalidURI");
  });

  it("DeleteObjects names its keys in the body; any other XML form is refused", () => {
    const body =
      '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object><Quiet>true</Quiet></Delete>';
    expect(s3DeleteObjects(body)).toEqual([
      { key: "a&b", versioned: false },
      { key: "c", versioned: false },
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
    // A key outside an object, or twice in one, is no form S3 reads either.
    for (const bad of [
      "<Delete><Key>x</Key><Object><Key>x</Key></Object></Delete>",
      "<Delete><Object><Key>x</Key><Key>y</Key></Object></Delete>",
      "<Delete><Object><Object><Key>x</Key></Object></Object></Delete>",
      "<Delete><Object></Object></Delete>",
      "<Delete><Object><Key>x</Key></Delete>",
    ])
      expect(
        code(() => s3DeleteKeys(bad)),
        bad,
      ).toBe("MalformedXML");
  });
});
