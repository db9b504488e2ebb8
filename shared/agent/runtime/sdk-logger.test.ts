import { afterEach, describe, expect, it, vi } from "vitest";
import { registerSdkLogger, SDK_LOGGER, sdkLogger } from "./sdk-logger.ts";

function captured() {
  // At info: the verbose line below must be left out whatever level the test run logs at.
  vi.stubEnv("LOG_LEVEL", "info");
  const lines: Record<string, unknown>[] = [];
  const grab = (chunk: unknown) => {
    lines.push(JSON.parse(String(chunk)));
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(grab as never);
  vi.spyOn(process.stderr, "write").mockImplementation(grab as never);
  return lines;
}
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("the SDK's global logger", () => {
  it("is what getLogger() of @langchain/langgraph-sdk/logging answers once registered", async () => {
    registerSdkLogger();
    const { getLogger } = await import("@langchain/langgraph-sdk/logging");
    expect(getLogger()).toBe((globalThis as Record<symbol, unknown>)[SDK_LOGGER]);
  });

  it("writes leveled JSON lines into the platform's logs, with child fields and metadata", () => {
    const lines = captured();
    const log = sdkLogger().child({ node: "n1" });
    log.warn("careful", { attempt: 2 }).info({ message: "as object", extra: true });
    log.verbose("chatty");
    log.log("error", new Error("boom"));
    expect(lines).toMatchObject([
      { level: "warn", msg: "careful", source: "graph", node: "n1", attempt: 2 },
      { level: "info", msg: "as object", extra: true },
      { level: "error", msg: "boom", error: { name: "Error", message: "boom" } },
    ]);
  });
});
