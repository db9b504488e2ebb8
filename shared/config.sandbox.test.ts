import { describe, expect, it } from "vitest";
import { buildConfig } from "./config.ts";

// The egress exceptions of sandboxed code: the operator's EGRESS_ALLOW for runtimes and builds, the npm registry
// for builds only (a runtime has no install to run, and a registry mirror on a private address is no API of its).
// Each case builds the configuration from an environment of its own, leaving process.env alone.

describe("the sandbox's egress exceptions", () => {
  it("the npm registry is a build's exception, not a runtime's", () => {
    const config = buildConfig({
      EGRESS_ALLOW: "models.lan:8080",
      npm_config_registry: "http://10.0.0.5:4873/",
    });
    expect(config.egressAllow).toEqual(["models.lan:8080"]);
    expect(config.sandbox.buildEgressAllow).toEqual(["models.lan:8080", "10.0.0.5:4873"]);
  });

  it("without a registry setting, builds get the public registry's name", () => {
    const config = buildConfig({});
    expect(config.egressAllow).toEqual([]);
    expect(config.sandbox.buildEgressAllow).toEqual(["registry.npmjs.org:443"]);
  });
});

describe("the sandbox's output and task limits are whole numbers", () => {
  const settings: [string, (c: ReturnType<typeof buildConfig>) => number][] = [
    ["AGENT_OUTPUT_LINES_PER_SECOND", (c) => c.sandbox.outputLinesPerSecond],
    ["AGENT_OUTPUT_LINE_CHARS", (c) => c.sandbox.outputLineChars],
    ["AGENT_RUNTIME_TASKS", (c) => c.sandbox.tasks],
  ];
  it.each(settings)("%s: a bad value throws naming it", (name, read) => {
    for (const bad of ["0", "-1", "1.5", "many"])
      expect(() => read(buildConfig({ [name]: bad }))).toThrow(name);
    expect(read(buildConfig({ [name]: "7" }))).toBe(7);
  });
});
