import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  endpointProblem,
  endpointUrlProblem,
  isInternalAddress,
  publicOnlyLookup,
} from "../containment/ssrf.ts";
import { toValidationIssues } from "../http/validation.ts";
import { destinationClient, destinationRoot, writeTestFailure, writeTestKey } from "./destination-client.ts";
import {
  credentialsProblem,
  notOwnLookup,
  OWN_ENDPOINT,
  ownEndpointProblem,
  prefixProblem,
} from "./destination-guard.ts";
import { DestinationCreate, isValidBucketName } from "./destination-schemas.ts";
import { classifyS3Error } from "./s3-errors.ts";

// Outside local mode unless a test says otherwise: the SSRF rules apply.
beforeEach(() => {
  vi.stubEnv("PLATFORM_LOCAL", "0");
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** What the handler would answer: the 422 locs of a body, or the parsed body. */
function parseBody(body: unknown) {
  const r = DestinationCreate.safeParse(body);
  return r.success
    ? { ok: true as const, data: r.data, locs: [] as string[] }
    : { ok: false as const, locs: toValidationIssues("body", r.error).map((i) => i.loc.join(".")) };
}

const base = { display_name: "lake", config: { bucket_name: "my-bucket" } };

describe("destination create body", () => {
  it("takes s3 and the spec's objstore, both stored as s3; defaults to s3", () => {
    for (const t of ["s3", "objstore", undefined]) {
      const r = parseBody({ ...base, destination_type: t });
      expect(r.ok && r.data.destination_type).toBe("s3");
    }
  });

  it.each([["gcs"], ["S3"], ["s3 "], [""], [null], [3]])("rejects destination_type %j at its loc", (t) => {
    expect(parseBody({ ...base, destination_type: t }).locs).toEqual(["body.destination_type"]);
  });

  it("defaults and normalises the config; extra fields are ignored", () => {
    const r = parseBody({ ...base, extra: 1, config: { bucket_name: "b-1", what: true } });
    expect(r.ok && r.data.config).toMatchObject({
      bucket_name: "b-1",
      prefix: "",
      include_bucket_in_prefix: false,
    });
    const s = parseBody({
      ...base,
      config: {
        bucket_name: "b-1",
        prefix: "//a/b///",
        region: "",
        endpoint_url: "",
        include_bucket_in_prefix: true,
      },
    });
    expect(s.ok && s.data.config).toMatchObject({
      prefix: "a/b",
      region: null,
      endpoint_url: null,
      include_bucket_in_prefix: true,
    });
    const n = parseBody({ ...base, config: { bucket_name: "b-1", prefix: null } });
    expect(n.ok && n.data.config.prefix).toBe("");
  });

  it.each([
    ["display_name", { display_name: "" }],
    ["display_name", { display_name: "x".repeat(256) }],
    ["display_name", { display_name: undefined }],
    ["config", { config: undefined }],
    ["config.bucket_name", { config: {} }],
    ["config.include_bucket_in_prefix", { config: { bucket_name: "b-1", include_bucket_in_prefix: "yes" } }],
    ["credentials.secret_access_key", { credentials: { access_key_id: "AKIA" } }],
    ["credentials.access_key_id", { credentials: { secret_access_key: "s" } }],
    ["credentials.access_key_id", { credentials: { access_key_id: "", secret_access_key: "s" } }],
  ])("a bad %s is a 422 naming it", (loc, over) => {
    expect(parseBody({ ...base, ...over }).locs).toContain(`body.${loc}`);
  });

  it("takes credentials with an optional session token (blank means none) and ignores extra fields", () => {
    const r = parseBody({
      ...base,
      credentials: { access_key_id: "AKIA", secret_access_key: "s", session_token: "", x: 1 },
    });
    expect(r.ok && r.data.credentials).toMatchObject({ access_key_id: "AKIA", session_token: null });
    expect(parseBody({ ...base, credentials: null }).ok).toBe(true);
  });

  it.each([["my-bucket"], ["abc"], ["a.b.c"], ["bucket-123.data"], ["a".repeat(63)]])(
    "accepts bucket name %j",
    (bucket_name) => {
      expect(isValidBucketName(bucket_name)).toBe(true);
      expect(parseBody({ ...base, config: { bucket_name } }).ok).toBe(true);
    },
  );

  it.each([
    ["A-Bucket"],
    ["ab"],
    ["a".repeat(64)],
    ["has_underscore"],
    ["192.168.1.1"],
    ["xn--bucket"],
    ["sthree-bucket"],
    ["amzn-s3-demo-bucket"],
    ["bucket-s3alias"],
    ["bucket--ol-s3"],
    ["bucket--x-s3"],
    ["a..b"],
    ["a.-b"],
    ["-lead"],
    ["trail-"],
    ["trail."],
    ["with space"],
  ])("rejects bucket name %j at config.bucket_name", (bucket_name) => {
    expect(isValidBucketName(bucket_name)).toBe(false);
    expect(parseBody({ ...base, config: { bucket_name } }).locs).toEqual(["body.config.bucket_name"]);
  });

  it("region: a DNS label for the cloud bucket; an S3-compatible endpoint may use other names", () => {
    const cfg = (c: object) => parseBody({ ...base, config: { bucket_name: "b-1", ...c } });
    expect(cfg({ region: "eu-west-3" }).ok).toBe(true);
    expect(cfg({ region: "auto" }).ok).toBe(true);
    expect(cfg({ region: "evil.com/x" }).locs).toEqual(["body.config.region"]);
    expect(cfg({ region: "RegionOne" }).locs).toEqual(["body.config.region"]);
    expect(cfg({ region: "RegionOne", endpoint_url: "https://s3.example.com" }).ok).toBe(true);
    expect(cfg({ region: "a b", endpoint_url: "https://s3.example.com" }).locs).toEqual([
      "body.config.region",
    ]);
  });

  it.each([
    ["ftp://s3.example.com"],
    ["file:///etc/passwd"],
    ["not a url"],
    ["https://user:pass@s3.example.com"],
    ["http://127.0.0.1:9000"],
    ["http://169.254.169.254/latest/meta-data"],
    ["http://[::1]:9000"],
    ["http://localhost:9000"],
  ])("rejects endpoint_url %j at config.endpoint_url (not local)", (endpoint_url) => {
    expect(parseBody({ ...base, config: { bucket_name: "b-1", endpoint_url } }).locs).toEqual([
      "body.config.endpoint_url",
    ]);
  });

  it("allows loopback endpoints in local mode, still only http(s) without credentials", () => {
    vi.stubEnv("PLATFORM_LOCAL", "1");
    const cfg = (endpoint_url: string) =>
      parseBody({ ...base, config: { bucket_name: "b-1", endpoint_url } });
    expect(cfg("http://127.0.0.1:9090").ok).toBe(true);
    expect(cfg("ftp://127.0.0.1:21").locs).toEqual(["body.config.endpoint_url"]);
    expect(cfg("http://u:p@127.0.0.1:9090").locs).toEqual(["body.config.endpoint_url"]);
  });
});

describe("SSRF guard", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.255.0.9", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.0.10", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["224.0.0.1", true],
    ["255.255.255.255", true],
    ["8.8.8.8", false],
    ["52.216.8.1", false],
    ["::", true],
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["fe80::1", true],
    ["febf::1", true],
    ["fe80::1%eth0", true],
    ["fc00::1", true],
    ["fd12:3456::1", true],
    ["ff02::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true], // the form URL parsing gives [::ffff:127.0.0.1]
    ["::ffff:a9fe:a9fe", true],
    ["::7f00:1", true],
    ["64:ff9b::a9fe:a9fe", true],
    ["2002:7f00:1::", true],
    ["2002:a9fe:a9fe::1", true],
    ["::ffff:8.8.8.8", false],
    ["64:ff9b::808:808", false],
    ["2002:808:808::", false],
    ["2606:4700::1111", false],
    ["2a05:d018::1", false],
    ["fc::1", false], // 00fc::, not fc00::/7
    ["not-an-ip", true],
    ["", true],
  ])("%s internal: %s", (addr, internal) => {
    expect(isInternalAddress(addr)).toBe(internal);
  });

  it.each([
    ["https://s3.example.com", undefined],
    ["http://s3.example.com:9000/base", undefined],
    ["https://[2606:4700::1111]", undefined],
    ["https://8.8.8.8", undefined],
    ["ftp://s3.example.com", /http/],
    ["https://u:p@s3.example.com", /credentials/],
    ["https://u@s3.example.com", /credentials/],
    ["http://169.254.169.254/latest", /public/],
    ["http://169.254.169.254./latest", /public/],
    ["http://[::1]:9000", /public/],
    ["http://[::ffff:127.0.0.1]:9000", /public/],
    ["http://[::ffff:169.254.169.254]/", /public/],
    ["http://0x7f.1/", /public/],
    ["http://2130706433/", /public/],
    ["http://0177.0.0.1/", /public/],
    ["http://0.0.0.0:80/", /public/],
    ["http://localhost:9000", /public/],
    ["http://LOCALHOST./", /public/],
    ["http://api.localhost/", /public/],
    ["http://metadata.google.internal/", /public/],
    ["not a url", /valid URL/],
  ])("endpointUrlProblem(%j) outside local mode", (url, expected) => {
    const problem = endpointUrlProblem(url, false);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  const resolver = (map: Record<string, string[]>) => async (h: string) => {
    if (!map[h]) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    return map[h];
  };
  it("refuses names resolving to internal addresses; unresolvable names are left to the write test", async () => {
    const r = resolver({
      "s3.example.com": ["52.1.2.3", "2600:1f18::1"],
      "evil.example.com": ["169.254.169.254"],
      "half.example.com": ["52.1.2.3", "10.0.0.5"],
      "v6.example.com": ["::ffff:7f00:1"],
    });
    expect(await endpointProblem("https://s3.example.com", false, r)).toBeUndefined();
    expect(await endpointProblem("https://evil.example.com", false, r)).toMatch(/public/);
    expect(await endpointProblem("https://half.example.com", false, r)).toMatch(/public/);
    expect(await endpointProblem("https://v6.example.com", false, r)).toMatch(/public/);
    expect(await endpointProblem("https://nowhere.example.com", false, r)).toBeUndefined();
    expect(await endpointProblem("http://[::1]:9000", false, r)).toMatch(/public/);
    expect(await endpointProblem("ftp://s3.example.com", false, r)).toMatch(/http/);
  });

  it("allows loopback endpoints and skips DNS in local mode", async () => {
    const never = async () => {
      throw new Error("no DNS in local mode");
    };
    expect(await endpointProblem("http://127.0.0.1:9090", true, never)).toBeUndefined();
    expect(await endpointProblem("http://evil.example.com", true, never)).toBeUndefined();
  });

  const lookupOf = (host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((done) =>
      publicOnlyLookup(host, { all }, (err, address) => done({ err, address })),
    );
  it("the socket lookup refuses internal addresses (DNS rebinding after creation)", async () => {
    for (const all of [true, false]) {
      const local = await lookupOf("localhost", all);
      expect(local.err?.code).toBe("EINTERNALADDRESS");
      expect(classifyS3Error(local.err).kind).toBe("endpoint");
      expect((await lookupOf("127.0.0.1", all)).err?.code).toBe("EINTERNALADDRESS");
      const pub = await lookupOf("8.8.8.8", all);
      expect(pub.err).toBeNull();
      expect(pub.address).toEqual(all ? [{ address: "8.8.8.8", family: 4 }] : "8.8.8.8");
    }
  });
});

/** An error shaped like the SDK's: name = S3 code (or a generic name), $metadata with the status. */
const s3err = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), {
    name,
    $metadata: status ? { httpStatusCode: status, ...((extra.$metadata as object) ?? {}) } : {},
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "$metadata")),
  });
const netErr = (code: string) =>
  Object.assign(new Error(`connect ${code}`), { code, $metadata: { attempts: 2 } });

/** Forbidden, missing and elsewhere-redirected buckets answer alike: no telling whether another's bucket exists. */
const BUCKET_ACCESS =
  "Access denied or bucket is not valid: the bucket must exist (in the region given) and the credentials must be allowed to write to it";

describe("S3 error classification", () => {
  it("AccessDenied, NoSuchBucket and a 301 give one message", () => {
    const messages = [
      s3err("AccessDenied", 403),
      s3err("NoSuchBucket", 404),
      s3err("PermanentRedirect", 301),
      s3err("Unknown", 301),
    ].map((e) => writeTestFailure(e).message);
    expect(new Set(messages)).toEqual(new Set([BUCKET_ACCESS]));
  });

  it("no S3 client exists for a destination without credentials unless the installation allows it", () => {
    const cfg = {
      bucket_name: "b",
      prefix: "",
      region: "us-east-1",
      endpoint_url: null,
      include_bucket_in_prefix: false,
    };
    expect(() => destinationClient(cfg, undefined, "check")).toThrow(/credentials are required/);
    expect(() => destinationClient(cfg, undefined, "export")).toThrow(
      expect.objectContaining({ name: "DestinationError" }),
    );
    process.env.EXPORT_ENVIRONMENT_CREDENTIALS = "allow";
    try {
      destinationClient(cfg, undefined, "check").destroy();
    } finally {
      delete process.env.EXPORT_ENVIRONMENT_CREDENTIALS;
    }
    destinationClient(cfg, { access_key_id: "a", secret_access_key: "s" }, "export").destroy();
  });

  it.each([
    ["InvalidAccessKeyId", s3err("InvalidAccessKeyId", 403, { Code: "InvalidAccessKeyId" }), "key_id"],
    ["AccessDenied", s3err("AccessDenied", 403), "access_denied"],
    ["SignatureDoesNotMatch", s3err("SignatureDoesNotMatch", 403), "access_denied"],
    ["ExpiredToken", s3err("ExpiredToken", 400), "access_denied"],
    ["a bare 403 (no body)", s3err("Unknown", 403), "access_denied"],
    ["no credentials found", s3err("CredentialsProviderError"), "access_denied"],
    ["NoSuchBucket", s3err("NoSuchBucket", 404), "bucket_invalid"],
    ["InvalidBucketName", s3err("InvalidBucketName", 400), "bucket_invalid"],
    ["PermanentRedirect", s3err("PermanentRedirect", 301), "bucket_invalid"],
    ["a bare 301", s3err("Unknown", 301), "bucket_invalid"],
    ["AuthorizationHeaderMalformed", s3err("AuthorizationHeaderMalformed", 400), "bucket_invalid"],
    ["an S3 404 without body", s3err("NotFound", 404, { $metadata: { requestId: "R1" } }), "bucket_invalid"],
    ["a 404 that is not S3's (HTML)", s3err("NotFound", 404), "endpoint"],
    ["a 400 that is not XML", s3err("Error", 400), "endpoint"],
    ["NotImplemented", s3err("NotImplemented", 501), "endpoint"],
    ["ECONNREFUSED", netErr("ECONNREFUSED"), "endpoint"],
    ["ENOTFOUND", netErr("ENOTFOUND"), "endpoint"],
    ["EHOSTUNREACH", netErr("EHOSTUNREACH"), "endpoint"],
    ["a bad certificate", netErr("DEPTH_ZERO_SELF_SIGNED_CERT"), "endpoint"],
    ["a TLS handshake with an http port", netErr("ERR_SSL_WRONG_VERSION_NUMBER"), "endpoint"],
    ["the SSRF lookup", netErr("EINTERNALADDRESS"), "endpoint"],
    [
      "a wrapped cause",
      Object.assign(new Error("fetch failed"), { cause: { code: "ECONNREFUSED" } }),
      "endpoint",
    ],
    [
      "TimeoutError",
      Object.assign(new Error("timeout"), { name: "TimeoutError", code: "ETIMEDOUT" }),
      "retryable",
    ],
    ["ECONNRESET", netErr("ECONNRESET"), "retryable"],
    ["EAI_AGAIN", netErr("EAI_AGAIN"), "retryable"],
    ["InternalError", s3err("InternalError", 500), "retryable"],
    ["SlowDown", s3err("SlowDown", 503), "retryable"],
    ["a 502 from a proxy", s3err("Unknown", 502), "retryable"],
    ["429", s3err("TooManyRequests", 429), "retryable"],
    ["NoSuchUpload", s3err("NoSuchUpload", 404), "retryable"],
    ["another S3 4xx", s3err("InvalidArgument", 400), "retryable"],
    ["a plain Error", new Error("boom"), "endpoint"],
    ["not an error", "boom", "endpoint"],
    ["null", null, "endpoint"],
  ])("%s → %s", (_label, err, kind) => {
    expect(classifyS3Error(err).kind).toBe(kind);
  });

  it("gives the spec's messages; a retryable fault keeps its code and message", () => {
    expect(classifyS3Error(s3err("AccessDenied", 403)).message).toBe(BUCKET_ACCESS);
    expect(classifyS3Error(s3err("NoSuchBucket", 404)).message).toBe(BUCKET_ACCESS);
    expect(classifyS3Error(s3err("InvalidAccessKeyId", 403)).message).toBe(
      "Key ID you provided does not exist",
    );
    expect(classifyS3Error(netErr("ECONNREFUSED")).message).toBe("Invalid endpoint");
    expect(classifyS3Error(s3err("SlowDown", 503)).message).toBe("SlowDown: SlowDown");
    expect(classifyS3Error(netErr("ECONNRESET")).message).toBe("ECONNRESET: connect ECONNRESET");
  });

  it("the write test answers 400 with the spec's message; no answer in time is an invalid endpoint", () => {
    const at = (err: unknown) => {
      const e = writeTestFailure(err);
      return [e.status, e.message];
    };
    expect(at(s3err("AccessDenied", 403))).toEqual([400, BUCKET_ACCESS]);
    expect(at(s3err("NoSuchBucket", 404))).toEqual([400, BUCKET_ACCESS]);
    expect(at(s3err("InvalidAccessKeyId", 403))).toEqual([400, "Key ID you provided does not exist"]);
    expect(at(netErr("ECONNREFUSED"))).toEqual([400, "Invalid endpoint"]);
    expect(at(Object.assign(new Error("t"), { name: "TimeoutError", $metadata: {} }))).toEqual([
      400,
      "Invalid endpoint",
    ]);
    expect(at(netErr("ECONNRESET"))).toEqual([400, "Invalid endpoint"]);
    const [status, message] = at(s3err("SlowDown", 503));
    expect(status).toBe(400);
    expect(message).toMatch(/HTTP 503.*SlowDown.*try again/);
  });
});

describe("key root", () => {
  const cfg = {
    bucket_name: "b",
    prefix: "p/q",
    region: null,
    endpoint_url: null,
    include_bucket_in_prefix: false,
  };
  it("leads with the bucket only when include_bucket_in_prefix", () => {
    expect(destinationRoot(cfg)).toBe("p/q");
    expect(destinationRoot({ ...cfg, include_bucket_in_prefix: true })).toBe("b/p/q");
    expect(destinationRoot({ ...cfg, prefix: "" })).toBe("");
    expect(destinationRoot({ ...cfg, prefix: "", include_bucket_in_prefix: true })).toBe("b");
  });
  it("puts the write test object under <root>/tmp/", () => {
    expect(writeTestKey(cfg, "u")).toBe("p/q/tmp/.agent-platform-write-test-u");
    expect(writeTestKey({ ...cfg, include_bucket_in_prefix: true }, "u")).toBe(
      "b/p/q/tmp/.agent-platform-write-test-u",
    );
    expect(writeTestKey({ ...cfg, prefix: "" }, "u")).toBe("tmp/.agent-platform-write-test-u");
    expect(writeTestKey(cfg)).toMatch(/^p\/q\/tmp\/\.agent-platform-write-test-[0-9a-f-]{36}$/);
  });
});

describe("a destination is never the platform's own", () => {
  it.each([
    ["a/../b"],
    [".."],
    ["a/./b"],
    ["a//b"],
    ["a\\b"],
    ["a/%2e%2e/b"],
    ["a/%2E./b"],
    ["a%2Fb/%2e"],
    ["a\u0000b"],
    ["a\nb"],
    ["a\u007fb"],
  ])("a prefix %j that reads as another path is a 422 naming config.prefix, not rewritten", (prefix) => {
    expect(parseBody({ ...base, config: { bucket_name: "b-1", prefix } }).locs).toEqual([
      "body.config.prefix",
    ]);
  });

  it("a prefix keeps dots inside names, and only its outer slashes are dropped", () => {
    for (const [given, kept] of [
      ["/traces/", "traces"],
      ["a.b/..c/d..", "a.b/..c/d.."],
      ["v1.2/x", "v1.2/x"],
    ]) {
      const r = parseBody({ ...base, config: { bucket_name: "b-1", prefix: given } });
      expect(r.ok && r.data.config.prefix).toBe(kept);
      expect(prefixProblem(kept)).toBeUndefined();
    }
  });

  it("an endpoint that resolves to one of the platform's services is refused under any alias", async () => {
    vi.stubEnv("PLATFORM_SERVICE_ENDPOINTS", "http://127.0.0.1:9090,http://127.0.0.1:8000");
    const resolve = async (h: string) => (h === "s3.example.test" ? ["127.0.0.1"] : ["203.0.113.9"]);
    for (const url of [
      "http://127.0.0.1:9090",
      "http://localhost:9090/",
      "http://127.0.0.2:9090",
      "http://0.0.0.0:9090",
      "http://[::1]:9090",
      "http://[::ffff:127.0.0.1]:9090",
      "http://LOCALHOST.:9090",
      "http://s3.example.test:9090",
      "http://127.1:8000",
    ])
      expect(await ownEndpointProblem(url, resolve), url).toBe(OWN_ENDPOINT);
    for (const url of ["http://127.0.0.1:9091", "http://s3.other.test:9090", "https://127.0.0.1"])
      expect(await ownEndpointProblem(url, resolve), url).toBeUndefined();
  });

  it("the policy proxy's, the emulator's and the gateway's endpoints in this process's environment are the platform's", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:4100");
    vi.stubEnv("PLATFORM_LOOPBACK_URL", "http://127.0.0.1:4200");
    expect(await ownEndpointProblem("http://localhost:4100")).toBe(OWN_ENDPOINT);
    expect(await ownEndpointProblem("http://127.0.0.1:4200/x")).toBe(OWN_ENDPOINT);
  });

  it("a bad PLATFORM_SERVICE_ENDPOINTS stops the check naming the variable", async () => {
    vi.stubEnv("PLATFORM_SERVICE_ENDPOINTS", "not a url");
    await expect(ownEndpointProblem("http://127.0.0.1:1")).rejects.toThrow(/PLATFORM_SERVICE_ENDPOINTS/);
  });

  it("the platform's own access key ids are refused as a destination's credentials", () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "ASIAPLATFORMROLE");
    vi.stubEnv("PLATFORM_ACCESS_KEY_IDS", "S3RVER,LOCALROLE1");
    for (const id of ["ASIAPLATFORMROLE", "S3RVER", " LOCALROLE1 "])
      expect(credentialsProblem(id)).toMatch(/own/);
    expect(credentialsProblem("AKIACUSTOMER")).toBeUndefined();
  });

  it("a socket to a name that now resolves to a platform endpoint's port on loopback is refused (DNS rebinding)", async () => {
    vi.stubEnv("PLATFORM_SERVICE_ENDPOINTS", "http://127.0.0.1:9090");
    const connect = (port: number) =>
      new Promise<string>((done) =>
        notOwnLookup(port)("localhost", { all: true }, (err) => done(err ? String(err.code) : "ok")),
      );
    expect(await connect(9090)).toBe("EOWNENDPOINT");
    expect(await connect(9091)).toBe("ok");
  });
});
