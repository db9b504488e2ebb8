import { describe, expect, it } from "vitest";
import type { RevisionConfig } from "../wire.ts";
import { repoOf, statusKind, TERMINAL } from "./deployment-data.ts";
import { dayOrTime, FINAL, utc, windowText } from "./export-data.ts";

const config = (over: Partial<RevisionConfig> = {}): RevisionConfig => ({
  repo_ref: null,
  graph_config_path: "langgraph.json",
  langgraph_config_path: "langgraph.json",
  image_uri: null,
  ...over,
});

describe("deployment facts", () => {
  it("a deployment's code: its repository and ref, else its image, else its source", () => {
    const repo = { source: "github", source_config: { repo_url: "https://github.com/a/b" } };
    expect(repoOf({ ...repo, source_revision_config: config({ repo_ref: "main" }) })).toBe(
      "https://github.com/a/b @ main",
    );
    expect(repoOf({ ...repo, source_revision_config: config() })).toBe("https://github.com/a/b");
    expect(
      repoOf({
        source: "external_docker",
        source_config: {},
        source_revision_config: config({ image_uri: "img:1" }),
      }),
    ).toBe("img:1");
    expect(repoOf({ source: "local", source_config: {}, source_revision_config: config() })).toBe("local");
  });

  it("a revision status's kind, and which statuses are final", () => {
    expect(statusKind("DEPLOYED")).toBe("ok");
    expect(["BUILD_FAILED", "INTERRUPTED", "UNKNOWN"].map(statusKind)).toEqual(["bad", "bad", "bad"]);
    expect(statusKind("SKIPPED")).toBe("skip");
    expect(statusKind("BUILDING")).toBe("busy");
    expect(TERMINAL.has("DEPLOY_FAILED")).toBe(true);
    expect(TERMINAL.has("DEPLOYING")).toBe(false);
  });
});

describe("export facts", () => {
  it("a run's day, with its time when the window does not start at midnight UTC", () => {
    expect(dayOrTime("2026-04-01T00:00:00Z")).toBe("2026-04-01");
    expect(dayOrTime("2026-04-01T06:30:00Z")).toBe("2026-04-01 06:30");
  });

  it("an export's window in UTC, or its interval for a scheduled one", () => {
    expect(utc(null)).toBe("—");
    const once = {
      interval_hours: null,
      start_time: "2026-04-01T00:00:00Z",
      end_time: "2026-04-03T00:00:00Z",
    };
    expect(windowText(once)).toBe("2026-04-01 00:00 UTC → 2026-04-03 00:00 UTC");
    expect(windowText({ ...once, interval_hours: 24, end_time: null })).toBe(
      "every 24 h from 2026-04-01 00:00 UTC",
    );
  });

  it("final export statuses", () => {
    expect(["Completed", "Failed", "Cancelled", "TimedOut"].every((s) => FINAL.has(s))).toBe(true);
    expect(FINAL.has("Running")).toBe(false);
  });
});
