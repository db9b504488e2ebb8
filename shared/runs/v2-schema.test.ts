import { describe, expect, it } from "vitest";
import { threadIdOf } from "./derive.ts";
import { RunRetrieveQuery, RunsQueryBody, ThreadsQueryBody, ThreadTracesQuery } from "./v2-schema.ts";
import { project, RUN_SELECTS } from "./v2-select.ts";

const P = "6f1d7c4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f";

describe("a run's thread (threadIdOf)", () => {
  it("is the first of session_id, thread_id, conversation_id in its metadata", () => {
    expect(threadIdOf({ metadata: { thread_id: "t", conversation_id: "c" } })).toBe("t");
    expect(threadIdOf({ metadata: { conversation_id: "c", session_id: "s" } })).toBe("s");
    expect(threadIdOf({ metadata: { conversation_id: 7 } })).toBe("7");
  });
  it("is none without such a key, or with an empty or non-scalar value", () => {
    for (const extra of [
      null,
      {},
      { metadata: null },
      { metadata: { thread_id: "" } },
      { metadata: { thread_id: {} } },
    ])
      expect(threadIdOf(extra)).toBeNull();
  });
});

describe("v2 request shapes", () => {
  it("a runs query needs project_ids, and pages 100 by default", () => {
    expect(RunsQueryBody.parse({ project_ids: [P] }).page_size).toBe(100);
    expect(RunsQueryBody.safeParse({}).success).toBe(false);
  });
  it("refuses the hosted fields not served here, and unknown ones", () => {
    for (const body of [
      { project_ids: [P], reference_dataset_id: P },
      { project_ids: [P], include_subtree_usage: true },
      { project_ids: [P], selects: ["LS_USER_ID"] },
      { project_ids: [P], min_start_time: "yesterday" },
      { project_ids: [P], nope: 1 },
    ])
      expect(RunsQueryBody.safeParse(body).success, JSON.stringify(body)).toBe(false);
    expect(ThreadsQueryBody.safeParse({ project_id: P, thread_filter: "x" }).success).toBe(false);
  });
  it("repeated selects of a GET arrive comma-joined", () => {
    expect(RunRetrieveQuery.parse({ project_id: P, selects: "NAME,STATUS" }).selects).toEqual([
      "NAME",
      "STATUS",
    ]);
    expect(ThreadTracesQuery.parse({ project_id: P, selects: "TURN_NUMBER", page_size: "2" })).toMatchObject({
      selects: ["TURN_NUMBER"],
      page_size: 2,
    });
  });
});

describe("v2 selects", () => {
  it("answer lower-case keys in the hosted forms", () => {
    const wire = {
      run_type: "llm",
      status: "error",
      start_time: "2026-01-01T00:00:00.000000Z",
      end_time: "2026-01-01T00:00:01.500000Z",
      prompt_token_details: { cache_read: 3 },
      s3_urls: { "attachment.a.png": { presigned_url: "https://x/a", mime_type: "image/png" } },
      extra: { metadata: { k: 1 } },
    };
    expect(
      project(RUN_SELECTS, wire, [
        "RUN_TYPE",
        "STATUS",
        "LATENCY_SECONDS",
        "PROMPT_TOKEN_DETAILS",
        "ATTACHMENTS",
        "METADATA",
        "IS_IN_DATASET",
      ]),
    ).toEqual({
      run_type: "LLM",
      status: "ERROR",
      latency_seconds: 1.5,
      prompt_token_details: { raw: { cache_read: 3 } },
      attachments: { "a.png": "https://x/a" },
      metadata: { k: 1 },
      is_in_dataset: false,
    });
  });
});
