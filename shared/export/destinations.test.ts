import { describe, expect, it } from "vitest";
import {
  classifyS3Error,
  DestinationCreate,
  destinationRoot,
  endpointProblem,
  isInternalAddress,
} from "./destinations.ts";

const s3err = (name: string, status?: number) =>
  Object.assign(new Error(name), { name, $metadata: status ? { httpStatusCode: status } : {} });

describe("destination create body", () => {
  const base = { display_name: "lake", config: { bucket_name: "my-bucket" } };
  it("accepts s3 and the spec's objstore, defaults the prefix and strips its slashes", () => {
    expect(DestinationCreate.parse({ ...base, destination_type: "objstore" }).destination_type).toBe(
      "objstore",
    );
    const d = DestinationCreate.parse({
      ...base,
      destination_type: "s3",
      config: { bucket_name: "b-1", prefix: "/a/b/" },
    });
    expect(d.config.prefix).toBe("a/b");
    expect(DestinationCreate.parse(base).config.prefix).toBe("");
  });
  it.each([["gcs"], ["S3 "], [""]])("rejects destination_type %j", (t) => {
    expect(DestinationCreate.safeParse({ ...base, destination_type: t }).success).toBe(false);
  });
  it.each([["A-Bucket"], ["ab"], ["has_underscore"], ["192.168.1.1"], ["xn--bucket"], ["a..b"], ["-lead"]])(
    "rejects bucket name %j",
    (bucket_name) => {
      expect(DestinationCreate.safeParse({ ...base, config: { bucket_name } }).success).toBe(false);
    },
  );
  it("needs both keys when credentials are given", () => {
    expect(DestinationCreate.safeParse({ ...base, credentials: { access_key_id: "AKIA" } }).success).toBe(
      false,
    );
  });
});

describe("SSRF guard", () => {
  it.each([
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.32.0.1", false],
    ["192.168.0.10", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["8.8.8.8", false],
    ["::1", true],
    ["fe80::1", true],
    ["fd00::1", true],
    ["::ffff:127.0.0.1", true],
    ["2606:4700::1111", false],
    ["not-an-ip", true],
  ])("%s internal: %s", (addr, internal) => {
    expect(isInternalAddress(addr)).toBe(internal);
  });

  const resolver = (map: Record<string, string[]>) => async (h: string) => {
    if (!map[h]) throw new Error("ENOTFOUND");
    return map[h];
  };
  it("refuses non-http(s), credentials in the URL, internal hosts and names resolving to them (not local)", async () => {
    const r = resolver({ "s3.example.com": ["52.1.2.3"], "evil.example.com": ["169.254.169.254"] });
    expect(await endpointProblem("https://s3.example.com", false, r)).toBeUndefined();
    expect(await endpointProblem("ftp://s3.example.com", false, r)).toMatch(/http/);
    expect(await endpointProblem("https://u:p@s3.example.com", false, r)).toMatch(/credentials/);
    expect(await endpointProblem("http://169.254.169.254/latest", false, r)).toMatch(/public/);
    expect(await endpointProblem("http://[::1]:9000", false, r)).toMatch(/public/);
    expect(await endpointProblem("http://localhost:9000", false, r)).toMatch(/public/);
    expect(await endpointProblem("https://evil.example.com", false, r)).toMatch(/public/);
    expect(await endpointProblem("https://nowhere.example.com", false, r)).toBe("Invalid endpoint");
    expect(await endpointProblem("not a url", false, r)).toMatch(/valid URL/);
  });
  it("allows loopback endpoints in local mode", async () => {
    expect(await endpointProblem("http://127.0.0.1:9090", true)).toBeUndefined();
  });
});

describe("S3 error classification", () => {
  it.each([
    ["AccessDenied", 403, "access_denied", "Access denied"],
    ["SignatureDoesNotMatch", 403, "access_denied", "Access denied"],
    ["InvalidAccessKeyId", 403, "key_id", "Key ID you provided does not exist"],
    ["NoSuchBucket", 404, "bucket_invalid", "Bucket is not valid"],
    ["PermanentRedirect", 301, "bucket_invalid", "Bucket is not valid"],
    ["ECONNREFUSED", undefined, "endpoint", "Invalid endpoint"],
    ["InternalError", 500, "retryable", undefined],
    ["SlowDown", 503, "retryable", undefined],
  ])("%s → %s", (name, status, kind, message) => {
    const c = classifyS3Error(s3err(name, status));
    expect(c.kind).toBe(kind);
    if (message) expect(c.message).toBe(message);
  });
});

describe("key root", () => {
  it("leads with the bucket only when include_bucket_in_prefix", () => {
    const cfg = {
      bucket_name: "b",
      prefix: "p/q",
      region: null,
      endpoint_url: null,
      include_bucket_in_prefix: false,
    };
    expect(destinationRoot(cfg)).toBe("p/q");
    expect(destinationRoot({ ...cfg, include_bucket_in_prefix: true })).toBe("b/p/q");
    expect(destinationRoot({ ...cfg, prefix: "" })).toBe("");
  });
});
