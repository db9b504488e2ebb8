import { describe, expect, it } from "vitest";
import {
  MAX_BATCH_RUNS,
  MAX_PROJECT_IDS,
  MAX_QUERY_RUN_IDS,
  MAX_QUERY_SESSIONS,
  MAX_RUN_TAGS,
} from "../shared/platform/list-bounds.ts";
import { auth, call } from "./helpers/cloud.ts";

// Every list input of the platform API has a maximum; one item more is a 422 naming the list.
const uuids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());

describe("platform API list inputs are bounded", () => {
  it.each([
    ["id", MAX_QUERY_RUN_IDS],
    ["session", MAX_QUERY_SESSIONS],
  ])("POST /runs/query takes at most the maximum of %s ids (%i); one more is a 422", async (field, max) => {
    const at = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { [field]: uuids(max), limit: 1 },
    });
    expect(at.status, at.text).not.toBe(422); // unknown projects are a 404, past validation
    const over = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { [field]: uuids(max + 1) },
    });
    expect(over.status, over.text).toBe(422);
    expect(over.json.detail).toEqual([
      expect.objectContaining({
        loc: ["body", field],
        type: "too_big",
        msg: expect.stringContaining(String(max)),
      }),
    ]);
  });

  it("GET /sessions takes at most the maximum of project ids; one more is a 422", async () => {
    const at = await call("GET", `/api/v1/sessions?id=${uuids(MAX_PROJECT_IDS).join(",")}`, {
      headers: auth,
    });
    expect(at.status, at.text).toBe(200);
    const over = await call("GET", `/api/v1/sessions?id=${uuids(MAX_PROJECT_IDS + 1).join(",")}`, {
      headers: auth,
    });
    expect(over.status, over.text).toBe(422);
    expect(over.json.detail[0].loc).toEqual(["query", "id"]);
  });

  it.each(["post", "patch"])(
    "POST /runs/batch takes at most the maximum of runs in %s; one more is a 422",
    async (field) => {
      const r = await call("POST", "/api/v1/runs/batch", {
        headers: auth,
        body: { [field]: Array.from({ length: MAX_BATCH_RUNS + 1 }, () => ({})) },
      });
      expect(r.status, r.text).toBe(422);
      expect(r.json.detail[0].loc).toEqual(["body", field]);
    },
  );

  it("a run with more tags than the maximum is refused, naming its tags", async () => {
    const run = {
      id: crypto.randomUUID(),
      name: "tagged",
      run_type: "chain",
      start_time: new Date().toISOString(),
      tags: Array.from({ length: MAX_RUN_TAGS + 1 }, (_, i) => `t${i}`),
    };
    const r = await call("POST", "/api/v1/runs/batch", { headers: auth, body: { post: [run] } });
    expect(r.status, r.text).toBe(422);
    expect(JSON.stringify(r.json.detail)).toContain("tags");
  });
});
