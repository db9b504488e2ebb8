import { describe, expect, it } from "vitest";
import type { Part } from "./multipart.ts";
import { groupRunParts } from "./parts.ts";

const A = "0b9f5f7e-3c1a-4d8e-9a51-6f2c7d1e4b10";
const B = "7d3c2b1a-0f9e-4d8c-8b7a-6e5d4c3b2a19";
const FB = "11111111-2222-4333-8444-555555555555";

const part = (name: string, data: unknown, contentType = "application/json"): Part => ({
  name,
  contentType,
  headers: {},
  data: Buffer.isBuffer(data) ? data : Buffer.from(JSON.stringify(data)),
});

describe("groupRunParts", () => {
  it("merges each field part into its run under the field name", () => {
    const g = groupRunParts([
      part(`post.${A}`, { name: "chain", run_type: "chain", trace_id: A }),
      part(`post.${A}.inputs`, { q: 1 }),
      part(`post.${A}.outputs`, { a: 2 }),
      part(`post.${A}.events`, [{ name: "start" }]),
      part(`post.${A}.extra`, { metadata: {} }),
      part(`post.${A}.serialized`, { lc: 1 }),
    ]);
    expect(g.errors).toEqual([]);
    expect(g.posts.get(A)).toEqual({
      id: A,
      name: "chain",
      run_type: "chain",
      trace_id: A,
      inputs: { q: 1 },
      outputs: { a: 2 },
      events: [{ name: "start" }],
      extra: { metadata: {} },
      serialized: { lc: 1 },
    });
  });

  it("lets field parts win over the same key in the run JSON, whichever comes first", () => {
    const g = groupRunParts([
      part(`patch.${A}.outputs`, { new: true }),
      part(`patch.${A}`, { outputs: { old: true } }),
    ]);
    expect(g.patches.get(A)?.outputs).toEqual({ new: true });
    expect(g.posts.size).toBe(0);
  });

  it("keeps posts and patches of the same run apart", () => {
    const g = groupRunParts([part(`post.${A}`, { name: "x" }), part(`patch.${A}`, { end_time: "t" })]);
    expect(g.posts.get(A)).toEqual({ id: A, name: "x" });
    expect(g.patches.get(A)).toEqual({ id: A, end_time: "t" });
  });

  it("takes error as a JSON string", () => {
    expect(groupRunParts([part(`patch.${A}.error`, "Traceback: boom")]).patches.get(A)?.error).toBe(
      "Traceback: boom",
    );
  });

  it("creates the run from field parts alone (the run JSON may come in another request)", () => {
    expect(groupRunParts([part(`post.${A}.inputs`, { q: 1 })]).posts.get(A)).toEqual({
      id: A,
      inputs: { q: 1 },
    });
  });

  it("collects feedback, setting the id from the part name", () => {
    const g = groupRunParts([part(`feedback.${FB}`, { run_id: A, key: "score", score: 1 })]);
    expect(g.feedback).toEqual([{ id: FB, run_id: A, key: "score", score: 1 }]);
  });

  it("collects attachments with their bytes and content type; the name is all after the run id", () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    const g = groupRunParts([
      part(`attachment.${A}.image`, png, "image/png"),
      part(`attachment.${B}.a.b.txt`, png),
    ]);
    expect(g.attachments).toEqual([
      { runId: A, name: "image", contentType: "image/png", data: png },
      { runId: B, name: "a.b.txt", contentType: "application/json", data: png },
    ]);
  });

  it("lower-cases run ids so post and patch parts of one run meet", () => {
    const g = groupRunParts([
      part(`post.${A.toUpperCase()}`, { id: A.toUpperCase() }),
      part(`post.${A}.inputs`, {}),
    ]);
    expect([...g.posts.keys()]).toEqual([A]);
    expect(g.posts.get(A)).toEqual({ id: A, inputs: {} });
  });

  it("reports each bad part by name and keeps every good one", () => {
    const g = groupRunParts([
      part(`post.${A}`, { name: "good" }),
      part("run.x", {}),
      part("post", {}),
      part("post.not-a-uuid", {}),
      part(`post.${B}.metadata`, {}),
      part(`post.${B}.x.inputs`, {}),
      part(`post.${B}.inputs`, Buffer.from("{not json")),
      part(`post.${B}.outputs`, Buffer.from([0x22, 0xff, 0x22])),
      part(`patch.${B}`, [1, 2]),
      part(`patch.${B}`, { id: A }),
      part(`post.${A}`, { name: "again" }),
      part(`post.${A}.inputs`, { q: 1 }),
      part(`post.${A}.inputs`, { q: 2 }),
      part(`feedback.${FB}`, "nope"),
      part(`feedback.${FB}.x`, {}),
      part(`attachment.${A}`, Buffer.from("x")),
      part(`attachment.${A}.f`, Buffer.from("x")),
      part(`attachment.${A}.f`, Buffer.from("y")),
    ]);
    expect(g.posts).toEqual(new Map([[A, { id: A, name: "good", inputs: { q: 1 } }]]));
    expect(g.attachments).toHaveLength(1);
    expect(g.errors.map((e) => [e.part, e.message])).toEqual([
      ["run.x", expect.stringMatching(/unknown part name/)],
      ["post", expect.stringMatching(/run id "" is not a UUID/)],
      ["post.not-a-uuid", expect.stringMatching(/not a UUID/)],
      [`post.${B}.metadata`, expect.stringMatching(/unknown run field "metadata"/)],
      [`post.${B}.x.inputs`, expect.stringMatching(/unknown run field "x.inputs"/)],
      [`post.${B}.inputs`, expect.stringMatching(/not valid JSON/)],
      [`post.${B}.outputs`, expect.stringMatching(/not valid UTF-8/)],
      [`patch.${B}`, expect.stringMatching(/must be a JSON object/)],
      [`patch.${B}`, expect.stringMatching(/differs from the id in the part name/)],
      [`post.${A}`, expect.stringMatching(/duplicate part/)],
      [`post.${A}.inputs`, expect.stringMatching(/duplicate part: inputs/)],
      [`feedback.${FB}`, expect.stringMatching(/must be a JSON object/)],
      [`feedback.${FB}.x`, expect.stringMatching(/not a UUID/)],
      [`attachment.${A}`, expect.stringMatching(/no name after the run id/)],
      [`attachment.${A}.f`, expect.stringMatching(/duplicate part/)],
    ]);
  });
});
