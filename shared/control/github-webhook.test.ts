import { describe, expect, it } from "vitest";
import {
  deliveryOf,
  payloadOf,
  pushMatches,
  pushOf,
  repositoryIdentity,
  signatureMatches,
  signatureOf,
} from "./github-webhook.ts";

// GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!".
const DOC_SECRET = "It's a Secret to Everybody";
const DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
const SHA = "0123456789abcdef0123456789abcdef01234567";

const push = (over: Record<string, unknown> = {}, repo: Record<string, unknown> = {}) => ({
  ref: "refs/heads/main",
  before: "f".repeat(40),
  after: SHA,
  deleted: false,
  repository: {
    full_name: "Acme/Agent",
    clone_url: "https://github.com/Acme/Agent.git",
    html_url: "https://github.com/Acme/Agent",
    ssh_url: "git@github.com:Acme/Agent.git",
    default_branch: "main",
    ...repo,
  },
  ...over,
});

describe("the delivery's signature", () => {
  it("matches GitHub's documented example", () => {
    expect(signatureOf(DOC_SECRET, "Hello, World!")).toBe(DOC_SIGNATURE);
    expect(signatureMatches(DOC_SECRET, Buffer.from("Hello, World!"), DOC_SIGNATURE)).toBe(true);
    expect(
      signatureMatches(
        DOC_SECRET,
        Buffer.from("Hello, World!"),
        DOC_SIGNATURE.toUpperCase().replace("SHA256", "sha256"),
      ),
    ).toBe(true);
  });

  it("is refused when missing, malformed, of another secret, or of other bytes", () => {
    const body = Buffer.from("Hello, World!");
    for (const header of [
      undefined,
      "",
      "sha256=",
      "sha1=abc",
      DOC_SIGNATURE.slice(0, -1),
      `${DOC_SIGNATURE}0`,
    ])
      expect(signatureMatches(DOC_SECRET, body, header)).toBe(false);
    expect(signatureMatches("another secret", body, DOC_SIGNATURE)).toBe(false);
    expect(signatureMatches(DOC_SECRET, Buffer.from("Hello, World! "), DOC_SIGNATURE)).toBe(false);
  });

  it("is over the raw bytes: the same JSON re-serialized does not match", () => {
    const raw = Buffer.from('{ "a": 1,\n  "b": "é" }');
    const header = signatureOf("s", raw);
    expect(signatureMatches("s", raw, header)).toBe(true);
    expect(signatureMatches("s", Buffer.from(JSON.stringify(JSON.parse(raw.toString()))), header)).toBe(
      false,
    );
  });
});

describe("the delivery headers", () => {
  it("name the event and the delivery", () => {
    expect(
      deliveryOf({ "x-github-event": "push", "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" }),
    ).toEqual({
      event: "push",
      id: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    });
  });

  it("missing or malformed is a 400", () => {
    for (const h of [
      {},
      { "x-github-event": "push" },
      { "x-github-delivery": "abc" },
      { "x-github-event": "push", "x-github-delivery": "a b" },
      { "x-github-event": "Push!", "x-github-delivery": "abc" },
      { "x-github-event": "push", "x-github-delivery": "a".repeat(129) },
    ])
      expect(() => deliveryOf(h), JSON.stringify(h)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe("the payload", () => {
  it("is the JSON body, or the payload field of a form-encoded one", () => {
    const json = JSON.stringify(push());
    expect(payloadOf(Buffer.from(json), "application/json")).toEqual(push());
    const form = `payload=${encodeURIComponent(json)}`;
    expect(payloadOf(Buffer.from(form), "application/x-www-form-urlencoded")).toEqual(push());
  });

  it("not JSON, or not an object, is a 400", () => {
    for (const raw of ["", "{", "[1]", "null", "42", '"x"'])
      expect(() => payloadOf(Buffer.from(raw), "application/json"), raw).toThrow(
        expect.objectContaining({ status: 400 }),
      );
    expect(() => payloadOf(Buffer.from("a=1"), "application/x-www-form-urlencoded")).toThrow(
      expect.objectContaining({ status: 400 }),
    );
  });

  it("a push gives its ref, pushed commit and repository addresses", () => {
    expect(pushOf(push())).toEqual({
      ref: "refs/heads/main",
      after: SHA,
      deleted: false,
      repository: {
        urls: [
          "https://github.com/Acme/Agent.git",
          "https://github.com/Acme/Agent",
          "git@github.com:Acme/Agent.git",
        ],
        default_branch: "main",
      },
    });
  });

  it("a deleted branch is a push with deleted set (after all zeros)", () => {
    expect(pushOf(push({ deleted: true, after: "0".repeat(40) })).deleted).toBe(true);
    expect(pushOf(push({ after: "0".repeat(40) })).deleted).toBe(true);
  });

  it("a push without ref, a full sha after, or a repository is a 400", () => {
    for (const over of [
      { ref: undefined },
      { after: "abc" },
      { after: 7 },
      { repository: "x" },
      { repository: null },
    ])
      expect(() => pushOf(push(over)), JSON.stringify(over)).toThrow(
        expect.objectContaining({ status: 400 }),
      );
  });
});

describe("which deployments a push is for", () => {
  it("repository addresses reduce to host/owner/name, case and .git aside; local ones to their path", () => {
    for (const a of [
      "https://github.com/acme/agent",
      "https://GitHub.com/Acme/Agent.git",
      "https://github.com/acme/agent/",
      "git@github.com:Acme/Agent.git",
      "ssh://git@github.com/acme/agent.git",
      "git://github.com/acme/agent.git",
    ])
      expect(repositoryIdentity(a), a).toBe("github.com/acme/agent");
    expect(repositoryIdentity("/tmp/repo")).toBe("/tmp/repo");
    expect(repositoryIdentity("file:///tmp/repo/")).toBe("/tmp/repo");
    expect(repositoryIdentity("/tmp/repo/.git")).toBe("/tmp/repo");
    expect(repositoryIdentity("relative/path")).toBeUndefined();
  });

  it("a push to the tracked repository and branch matches; another branch, repository or host does not", () => {
    const p = pushOf(push());
    expect(pushMatches(p, { repo_url: "https://github.com/acme/agent", repo_ref: "main" })).toBe(true);
    expect(pushMatches(p, { repo_url: "https://github.com/acme/agent", repo_ref: "refs/heads/main" })).toBe(
      true,
    );
    expect(pushMatches(p, { repo_url: "https://github.com/acme/agent", repo_ref: "dev" })).toBe(false);
    expect(pushMatches(p, { repo_url: "https://github.com/acme/other", repo_ref: "main" })).toBe(false);
    expect(pushMatches(p, { repo_url: "https://ghe.example.com/acme/agent", repo_ref: "main" })).toBe(false);
    expect(pushMatches(p, { repo_url: null, repo_ref: "main" })).toBe(false);
  });

  it("no tracked ref means the repository's default branch", () => {
    expect(pushMatches(pushOf(push()), { repo_url: "https://github.com/acme/agent", repo_ref: null })).toBe(
      true,
    );
    const dev = pushOf(push({ ref: "refs/heads/dev" }));
    expect(pushMatches(dev, { repo_url: "https://github.com/acme/agent", repo_ref: null })).toBe(false);
  });

  it("a tracked tag matches a push of that tag", () => {
    const tag = pushOf(push({ ref: "refs/tags/v1" }));
    expect(pushMatches(tag, { repo_url: "https://github.com/acme/agent", repo_ref: "v1" })).toBe(true);
  });
});
