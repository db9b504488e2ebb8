import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LAMBDA_UNZIPPED_CODE_BYTES } from "../../aws/lambda-limits.ts";
import { DeployError } from "../../errors.ts";
import { deployRuntime } from "./lambda-host.ts";

// The deploy step checks a revision's size against what the runtime layer leaves before it makes a role or a
// function: Lambda would refuse the code only after the upload. The stubbed endpoints answer nothing, so a
// check that came later would fail on an AWS call instead.
afterEach(() => vi.unstubAllEnvs());

describe("deploying a runtime function", () => {
  it("refuses a revision the layer leaves no room for, before any AWS call, saying the sizes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "revision-"));
    try {
      await writeFile(join(dir, "graph.mjs"), "export const graph = 1;\n");
      await truncate(join(dir, "graph.mjs"), 2_000_000);
      vi.stubEnv(
        "PLATFORM_RUNTIME_SCOPE",
        JSON.stringify({ partition: "aws", region: "eu-west-1", account: "123456789012", tables: {} }),
      );
      vi.stubEnv("AGENT_RUNTIME_LAYER_ARN", "arn:aws:lambda:eu-west-1:123456789012:layer:rt:1");
      vi.stubEnv("AGENT_RUNTIME_LAYER_BYTES", String(LAMBDA_UNZIPPED_CODE_BYTES - 1_000_000));
      vi.stubEnv("AWS_ENDPOINT_URL", "http://127.0.0.1:9");
      const deploying = deployRuntime(
        {
          tenant_id: "t",
          deployment_id: "d",
          revision_id: "r",
          artifact_dir: dir,
          env: {},
          graphs: [],
          tracing_project_id: null,
        },
        () => {},
      );
      await expect(deploying).rejects.toBeInstanceOf(DeployError);
      await expect(deploying).rejects.toThrow(/revision's code is 2\.0 MB unzipped.*holds 1\.0 MB/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
