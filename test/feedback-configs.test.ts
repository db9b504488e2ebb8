import { Client } from "langsmith";
import { beforeAll, describe, expect, it } from "vitest";
import { newWorkspace } from "../harness/export.ts";
import { call, facts } from "./helpers/cloud.ts";

// Issue 27: feedback configs with the real langsmith SDK (createFeedbackConfig, listFeedbackConfigs,
// updateFeedbackConfig, addFeedbackCategories, removeFeedbackCategories, deleteFeedbackConfig). A key's stored
// config governs its new feedback, as on the hosted platform: a score outside it is refused, a feedback bringing
// another config is refused, and a key without one adopts the config its first feedback brings.
type Ws = Awaited<ReturnType<typeof newWorkspace>>;
const clientOf = (ws: Ws) =>
  new Client({ apiUrl: `${facts.base_url}/api/v1`, apiKey: ws.headers["X-Api-Key"], workspaceId: ws.tenant });
let ws: Ws;
let client: Client;
const api = (method: string, path: string, body?: unknown, headers = ws.headers) =>
  call(method, path, { headers, body });
const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
const run = () => crypto.randomUUID();

beforeAll(async () => {
  ws = await newWorkspace();
  client = clientOf(ws);
});

describe("feedback configs", () => {
  it("create answers the stored config; the same again answers it, a different one is refused", async () => {
    const made = await client.createFeedbackConfig({
      feedbackKey: "accuracy",
      feedbackConfig: { type: "continuous", min: 0, max: 1 },
    });
    expect(made).toMatchObject({
      feedback_key: "accuracy",
      feedback_config: { type: "continuous", min: 0, max: 1, categories: null },
      tenant_id: ws.tenant,
      is_lower_score_better: false,
      is_enforced: false,
    });
    expect(made.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = await client.createFeedbackConfig({
      feedbackKey: "accuracy",
      feedbackConfig: { type: "continuous", min: 0, max: 1 },
    });
    expect(again).toEqual(made);
    await expect(
      client.createFeedbackConfig({
        feedbackKey: "accuracy",
        feedbackConfig: { type: "continuous", max: 10 },
      }),
    ).rejects.toThrow(/400.*already exists/s);
  });

  it("list answers every config, or those of the keys named, or of keys containing a text", async () => {
    for (const key of ["tone-a", "tone-b", "other"])
      await client.createFeedbackConfig({
        feedbackKey: key,
        feedbackConfig: {
          type: "categorical",
          categories: [
            { value: 0, label: "bad" },
            { value: 1, label: "ok" },
          ],
        },
      });
    const keys = async (o?: Parameters<Client["listFeedbackConfigs"]>[0]) =>
      (await all(client.listFeedbackConfigs(o))).map((c) => c.feedback_key).sort();
    expect(await keys({ feedbackKeys: ["tone-a", "other"] })).toEqual(["other", "tone-a"]);
    expect(await keys({ nameContains: "tone" })).toEqual(["tone-a", "tone-b"]);
    expect(await keys()).toEqual(expect.arrayContaining(["other", "tone-a", "tone-b"]));
    expect(await keys({ feedbackKeys: ["tone-a"], limit: 1 })).toEqual(["tone-a"]);
  });

  it("update replaces the config or its direction, adds and removes categories; delete removes it", async () => {
    await client.createFeedbackConfig({
      feedbackKey: "grade",
      feedbackConfig: {
        type: "categorical",
        categories: [
          { value: 1, label: "a" },
          { value: 2, label: "b" },
        ],
      },
    });
    const added = await client.addFeedbackCategories("grade", [{ value: 3, label: "c" }]);
    expect(added.feedback_config.categories?.map((c) => c.value)).toEqual([1, 2, 3]);
    const removed = await client.removeFeedbackCategories("grade", [1]);
    expect(removed.feedback_config.categories?.map((c) => c.value)).toEqual([2, 3]);
    await expect(client.removeFeedbackCategories("grade", [2])).rejects.toThrow(/422.*two categories/s);
    const updated = await client.updateFeedbackConfig("grade", {
      feedbackConfig: { type: "continuous", min: 0, max: 5 },
      isLowerScoreBetter: true,
    });
    expect(updated).toMatchObject({
      feedback_key: "grade",
      feedback_config: { type: "continuous", min: 0, max: 5 },
      is_lower_score_better: true,
    });
    expect((await all(client.listFeedbackConfigs({ feedbackKeys: ["grade"] })))[0]).toEqual(updated);
    await client.deleteFeedbackConfig("grade");
    expect(await all(client.listFeedbackConfigs({ feedbackKeys: ["grade"] }))).toEqual([]);
    await expect(client.updateFeedbackConfig("grade", { isLowerScoreBetter: false })).rejects.toThrow(/404/);

    const byId = await client.createFeedbackConfig({
      feedbackKey: "by-id",
      feedbackConfig: { type: "freeform" },
    });
    await client.deleteFeedbackConfig(undefined, { configId: byId.id! });
    expect(await all(client.listFeedbackConfigs({ feedbackKeys: ["by-id"] }))).toEqual([]);
  });

  it("a stored config rules new feedback of its key: a score outside it is refused, on create and update", async () => {
    await client.createFeedbackConfig({
      feedbackKey: "helpful",
      feedbackConfig: { type: "continuous", min: 0, max: 1 },
    });
    await expect(client.createFeedback(run(), "helpful", { score: 5 })).rejects.toThrow(
      /422.*above the config's max 1/s,
    );
    const ok = await client.createFeedback(run(), "helpful", { score: 0.5 });
    expect((await client.readFeedback(ok.id)).score).toBe(0.5);
    await expect(client.updateFeedback(ok.id, { score: 2 })).rejects.toThrow(/422/);
    // A feedback bringing a config must bring the stored one; the stored one wins over none.
    await expect(
      client.createFeedback(run(), "helpful", {
        score: 3,
        feedbackConfig: { type: "continuous", min: 0, max: 5 },
      }),
    ).rejects.toThrow(/422.*stored feedback config/s);
    const same = await client.createFeedback(run(), "helpful", {
      score: 1,
      feedbackConfig: { type: "continuous", min: 0, max: 1 },
    });
    expect(same.id).toBeTruthy();
    // A changed config applies to feedback from then on.
    await client.updateFeedbackConfig("helpful", { feedbackConfig: { type: "continuous", min: 0, max: 10 } });
    expect((await client.createFeedback(run(), "helpful", { score: 5 })).id).toBeTruthy();
  });

  it("a key without a stored config adopts the config of its first accepted feedback", async () => {
    const refused = await api("POST", "/api/v1/feedback", {
      run_id: run(),
      key: "stars",
      score: 9,
      feedback_config: { type: "continuous", min: 1, max: 5 },
    });
    expect(refused.status).toBe(422);
    expect(await all(client.listFeedbackConfigs({ feedbackKeys: ["stars"] }))).toEqual([]);
    await client.createFeedback(run(), "stars", {
      score: 4,
      feedbackConfig: { type: "continuous", min: 1, max: 5 },
    });
    const [adopted] = await all(client.listFeedbackConfigs({ feedbackKeys: ["stars"] }));
    expect(adopted.feedback_config).toMatchObject({ type: "continuous", min: 1, max: 5 });
    await expect(client.createFeedback(run(), "stars", { score: 6 })).rejects.toThrow(/422/);
  });

  it("refuses what it does not do with a 422 saying why", async () => {
    const bad: [string, string, unknown, RegExp][] = [
      ["POST", "/api/v1/feedback-configs", { feedback_key: "x", feedback_config: { type: "scale" } }, /type/],
      [
        "POST",
        "/api/v1/feedback-configs",
        { feedback_key: "", feedback_config: { type: "freeform" } },
        /feedback_key/,
      ],
      [
        "POST",
        "/api/v1/feedback-configs",
        { feedback_key: "x", feedback_config: { type: "continuous", min: 2, max: 1 } },
        /above max/,
      ],
      [
        "POST",
        "/api/v1/feedback-configs",
        { feedback_key: "x", feedback_config: { type: "categorical", categories: [] } },
        /needs its categories/,
      ],
      [
        "POST",
        "/api/v1/feedback-configs",
        { feedback_key: "x", feedback_config: { type: "freeform" }, is_enforced: true },
        /enforced/,
      ],
      ["GET", "/api/v1/feedback-configs?include_all_configs=true", undefined, /deleted/],
      ["DELETE", "/api/v1/feedback-configs", undefined, /exactly one/],
      ["PATCH", "/api/v1/feedback-configs", { feedback_key: "x", add_categories: [] }, /add_categories/],
    ];
    for (const [method, path, body, why] of bad) {
      const r = await api(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(422);
      expect(r.json.detail[0]).toEqual(
        expect.objectContaining({ loc: expect.any(Array), msg: expect.any(String) }),
      );
      expect(JSON.stringify(r.json.detail)).toMatch(why);
    }
  });

  it("one workspace never sees or changes another's configs, nor is its feedback ruled by them", async () => {
    const other = await newWorkspace();
    const theirs = clientOf(other);
    await client.createFeedbackConfig({
      feedbackKey: "private",
      feedbackConfig: { type: "continuous", max: 1 },
    });
    expect(await all(theirs.listFeedbackConfigs())).toEqual([]);
    expect(await all(theirs.listFeedbackConfigs({ feedbackKeys: ["private"] }))).toEqual([]);
    await expect(theirs.updateFeedbackConfig("private", { isLowerScoreBetter: true })).rejects.toThrow(/404/);
    await expect(theirs.deleteFeedbackConfig("private")).rejects.toThrow(/404/);
    expect((await theirs.createFeedback(run(), "private", { score: 99 })).id).toBeTruthy();
    // Theirs now has its own config of the key (none: no config was brought); ours is unchanged.
    const [mine] = await all(client.listFeedbackConfigs({ feedbackKeys: ["private"] }));
    expect(mine.feedback_config).toMatchObject({ type: "continuous", max: 1 });
    expect(mine.is_lower_score_better).toBe(false);
  });
});
