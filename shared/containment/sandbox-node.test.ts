import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import pins from "./sandbox-node.json" with { type: "json" };
import {
  fetchedNodePath,
  nodeMajorOfRuntime,
  SANDBOX_NODE_MAJOR,
  sandboxNode,
  sandboxNodeMajor,
} from "./sandbox-node.ts";

// Deployments' code runs locally on the Node.js major its Lambda runtime names: nodejs22.x on 22, nodejs24.x on 24
// (each fetched by infra/local/ensure-deps.mjs from the npm registry, its integrity pinned per target).
const target = `${process.platform}-${process.arch}`;
const fetched = Object.keys(pins.majors).filter((m) => {
  const path = fetchedNodePath(m);
  return path !== undefined && existsSync(path);
});

describe("the Node.js deployments' code runs on", () => {
  it("is the major the function's Runtime names, the Lambda runtime's by default", () => {
    expect(nodeMajorOfRuntime("nodejs24.x")).toBe("24");
    expect(nodeMajorOfRuntime("nodejs22.x")).toBe("22");
    expect(nodeMajorOfRuntime(undefined)).toBe(SANDBOX_NODE_MAJOR);
    expect(SANDBOX_NODE_MAJOR).toBe("22");
  });

  it("pins Node.js 22 and 24 for Linux x64 and arm64", () => {
    for (const major of ["22", "24"])
      for (const t of ["linux-x64", "linux-arm64"])
        expect(
          (pins.majors as Record<string, Record<string, { version: string }>>)[major][t].version,
        ).toMatch(new RegExp(`^${major}\\.\\d+\\.\\d+$`));
  });

  it.runIf(fetched.length > 0)(
    "each fetched major's binary is its pinned version, and is what that major runs",
    () => {
      for (const major of fetched) {
        const pin = (pins.majors as Record<string, Record<string, { version: string }>>)[major][target];
        expect(sandboxNode(major)).toBe(fetchedNodePath(major));
        expect(sandboxNodeMajor(major)).toBe(major);
        expect(execFileSync(sandboxNode(major), ["--version"], { encoding: "utf8" }).trim()).toBe(
          `v${pin.version}`,
        );
      }
    },
  );

  it("a major without a pin runs on the Lambda runtime's", () => {
    expect(sandboxNode("18")).toBe(sandboxNode());
    expect(sandboxNodeMajor("18")).toBe(sandboxNodeMajor());
  });
});
