import { afterEach, describe, expect, it } from "vitest";
import { config } from "./config.ts";

// The egress exceptions of sandboxed code: the operator's EGRESS_ALLOW for runtimes and builds, the npm registry
// for builds only (a runtime has no install to run, and a registry mirror on a private address is no API of its).
const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe("the sandbox's egress exceptions", () => {
  it("the npm registry is a build's exception, not a runtime's", () => {
    process.env.EGRESS_ALLOW = "models.lan:8080";
    process.env.npm_config_registry = "http://10.0.0.5:4873/";
    expect(config.egressAllow).toEqual(["models.lan:8080"]);
    expect(config.sandbox.buildEgressAllow).toEqual(["models.lan:8080", "10.0.0.5:4873"]);
  });

  it("without a registry setting, builds get the public registry's name", () => {
    delete process.env.EGRESS_ALLOW;
    delete process.env.npm_config_registry;
    expect(config.egressAllow).toEqual([]);
    expect(config.sandbox.buildEgressAllow).toEqual(["registry.npmjs.org:443"]);
  });
});

describe("the sandbox's output and task limits are whole numbers", () => {
  const settings: [string, () => number][] = [
    ["AGENT_OUTPUT_LINES_PER_SECOND", () => config.sandbox.outputLinesPerSecond],
    ["AGENT_OUTPUT_LINE_CHARS", () => config.sandbox.outputLineChars],
    ["AGENT_RUNTIME_TASKS", () => config.sandbox.tasks],
  ];
  it.each(settings)("%s: a bad value throws naming it", (name, read) => {
    for (const bad of ["0", "-1", "1.5", "many"]) {
      process.env[name] = bad;
      expect(read).toThrow(name);
    }
    process.env[name] = "7";
    expect(read()).toBe(7);
  });
});
