// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} is .npmrc syntax, not a template
import { describe, expect, it } from "vitest";
import { filterNpmrc } from "./npmrc.ts";

const one = (text: string, secrets: Record<string, string> = {}) =>
  filterNpmrc([{ name: ".npmrc", text }], secrets);

describe("a repository's .npmrc: only registries and their tokens from secrets survive", () => {
  it("settings that run programs or move npm's files are dropped, each named in the log", () => {
    const r = one(
      [
        "git=./pwn.sh",
        "script-shell=/bin/sh",
        "node-options=--require ./x.js",
        "prefix=/tmp",
        "cache=/tmp/c",
        "userconfig=/tmp/u",
        "globalconfig=/tmp/g",
        "onload-script=./x.js",
        "ignore-scripts=false",
      ].join("\n"),
    );
    expect(r.text).toBe("");
    const names = r.dropped.map((d) => /: "([^"]+)"/.exec(d)?.[1]);
    expect(names).toEqual([
      "git",
      "script-shell",
      "node-options",
      "prefix",
      "cache",
      "userconfig",
      "globalconfig",
      "onload-script",
      "ignore-scripts",
    ]);
    expect(r.dropped.join("\n")).not.toContain("pwn.sh");
  });

  it("registry and scoped registries are kept", () => {
    const r = one("registry=https://npm.example.com\n@acme:registry = https://npm.acme.dev/r/\n");
    expect(r.text).toBe("registry=https://npm.example.com/\n@acme:registry=https://npm.acme.dev/r/\n");
    expect(r.dropped).toEqual([]);
  });

  it("a registry that is not an http(s) URL, or carries credentials, is dropped", () => {
    const r = one("registry=file:///etc\n@a:registry=https://u:p@x.dev/\n@b:registry=nope\n");
    expect(r.text).toBe("");
    expect(r.dropped).toHaveLength(3);
    expect(r.dropped.join("\n")).not.toContain("u:p");
  });

  it("an auth token is ${NAME} of a deployment secret, handed to npm through the environment", () => {
    const r = one("@acme:registry=https://npm.acme.dev/\n//npm.acme.dev/:_authToken=${ACME_TOKEN}\n", {
      ACME_TOKEN: "s3cr3t-token",
    });
    expect(r.text).toBe("@acme:registry=https://npm.acme.dev/\n//npm.acme.dev/:_authToken=${NPM_TOKEN_0}\n");
    expect(r.env).toEqual({ NPM_TOKEN_0: "s3cr3t-token" });
  });

  it("the default registry's token is kept without a registry line", () => {
    const r = one("//registry.npmjs.org/:_authToken=${T}", { T: "abcd" });
    expect(r.text).toBe("//registry.npmjs.org/:_authToken=${NPM_TOKEN_0}\n");
  });

  it("a literal token, a token from the platform's environment or for no configured registry is dropped", () => {
    process.env.BUILD_TEST_VAR = "platform-value";
    const r = one(
      [
        "//registry.npmjs.org/:_authToken=literal-token-value",
        "//registry.npmjs.org/:_authToken=${BUILD_TEST_VAR}",
        "//elsewhere.example/:_authToken=${T}",
      ].join("\n"),
      { T: "tok-value" },
    );
    delete process.env.BUILD_TEST_VAR;
    expect(r.text).toBe("");
    expect(r.env).toEqual({});
    expect(r.dropped).toHaveLength(3);
    expect(r.dropped.join("\n")).not.toMatch(/literal-token-value|platform-value|tok-value/);
  });

  it("sections and comments: sections are dropped, comments ignored; the later file wins", () => {
    const r = filterNpmrc(
      [
        { name: ".npmrc", text: "; c\n# c\nregistry=https://a.example/\n[x]\nregistry=https://b.example/\n" },
        { name: "agent/.npmrc", text: "registry=https://c.example/\n" },
      ],
      {},
    );
    expect(r.text).toBe("registry=https://c.example/\n");
    expect(r.dropped.map((d) => d.split(":")[0])).toEqual([".npmrc", ".npmrc"]);
  });
});
