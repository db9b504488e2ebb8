import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { Client, RunTree } from "langsmith";
import { describe, expect, it } from "vitest";
import { s3For, waitFor } from "../harness/export.ts";
import { buildMultipart } from "../shared/ingest/build-multipart.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Files sent with a run (`attachments` of a RunTree or createRun; the langsmith SDK sends them as
// `attachment.<run id>.<name>` parts of /runs/multipart) are kept: the run answers them in `s3_urls` as
// presigned URLs that give the bytes back. They were parsed and dropped before.
const client = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key });
const png = Uint8Array.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...Array.from({ length: 600 }, (_, i) => i % 251),
]);
const getRun = async (id: string) => (await call("GET", `/api/v1/runs/${id}`, { headers: auth })).json;
const bytesOf = async (url: string) => {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return { type: res.headers.get("content-type"), bytes: new Uint8Array(await res.arrayBuffer()) };
};

async function traced(project: string, attachments: RunTree["attachments"]) {
  const run = new RunTree({
    name: "with-files",
    run_type: "chain",
    project_name: project,
    client,
    inputs: { question: "what is in the picture?" },
    attachments,
  });
  await run.postRun();
  await run.end({ answer: "a cat" });
  await run.patchRun();
  await client.awaitPendingTraceBatches();
  return run.id;
}

describe("run attachments", () => {
  it("the SDK's attachments are answered in s3_urls; each presigned URL gives the bytes and their type", async () => {
    const project = `attachments-${crypto.randomUUID().slice(0, 8)}`;
    const notes = new TextEncoder().encode("café notes\n");
    const id = await traced(project, {
      photo: ["image/png", png],
      notes: { mimeType: "text/plain", data: notes },
    });
    const run = await waitFor("the run with its attachments", async () => {
      const r = await getRun(id);
      return r.end_time && Object.keys(r.s3_urls ?? {}).length === 2 ? r : undefined;
    });
    expect(run.outputs).toEqual({ answer: "a cat" });
    expect(Object.keys(run.s3_urls).sort()).toEqual(["attachment.notes", "attachment.photo"]);
    expect(run.s3_urls["attachment.photo"].mime_type).toBe("image/png");
    expect(run.s3_urls["attachment.notes"].mime_type).toBe("text/plain");
    const photo = await bytesOf(run.s3_urls["attachment.photo"].presigned_url);
    expect(photo.type).toBe("image/png");
    expect(Buffer.from(photo.bytes).equals(Buffer.from(png))).toBe(true);
    expect(
      new TextDecoder().decode((await bytesOf(run.s3_urls["attachment.notes"].presigned_url)).bytes),
    ).toBe("café notes\n");
    // The runs query answers them too: whole runs, or when selected.
    const q = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { id: [id], select: ["name", "s3_urls"] },
    });
    expect(Object.keys(q.json.runs[0].s3_urls).sort()).toEqual(["attachment.notes", "attachment.photo"]);
    const whole = await call("POST", "/api/v1/runs/query", { headers: auth, body: { id: [id] } });
    expect(Object.keys(whole.json.runs[0].s3_urls)).toHaveLength(2);
    // Not selected: not read.
    const without = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { id: [id], select: ["name"] },
    });
    expect(without.json.runs[0]).toEqual({ id, name: "with-files" });
  });

  it("active types (HTML, SVG, JavaScript) are presigned as downloads; passive ones stay inline", async () => {
    const project = `attachments-active-${crypto.randomUUID().slice(0, 8)}`;
    const html = new TextEncoder().encode("<script>alert(document.domain)</script>");
    const id = await traced(project, {
      page: ["text/html", html],
      drawing: [
        "image/svg+xml",
        new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>'),
      ],
      script: ["text/javascript", new TextEncoder().encode("alert(1)")],
      photo: ["image/png", png],
    });
    const run = await waitFor("the run with its attachments", async () => {
      const r = await getRun(id);
      return Object.keys(r.s3_urls ?? {}).length === 4 ? r : undefined;
    });
    for (const [name, type] of [
      ["page", "text/html"],
      ["drawing", "image/svg+xml"],
      ["script", "text/javascript"],
    ]) {
      const res = await fetch(run.s3_urls[`attachment.${name}`].presigned_url);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-disposition"), name).toBe(`attachment; filename*=UTF-8''${name}`);
      expect(res.headers.get("content-type"), name).toBe(type);
      await res.arrayBuffer();
    }
    const page = await fetch(run.s3_urls["attachment.page"].presigned_url);
    expect(Buffer.from(await page.arrayBuffer()).equals(Buffer.from(html))).toBe(true);
    const photo = await fetch(run.s3_urls["attachment.photo"].presigned_url);
    expect(photo.headers.get("content-disposition")).toBeNull();
    expect(photo.headers.get("content-type")).toBe("image/png");
    await photo.arrayBuffer();
  });

  it("an attachment sent again replaces the first (a retry keeps one); bad names are refused part by part", async () => {
    const id = crypto.randomUUID();
    const post = (extra: { name: string; data: Uint8Array | string; contentType: string }[]) => {
      const body = buildMultipart(
        [
          {
            name: `post.${id}`,
            data: JSON.stringify({
              name: "raw",
              run_type: "tool",
              session_name: "attachments-raw",
              start_time: new Date().toISOString(),
              inputs: {},
            }),
            contentType: "application/json",
          },
          ...extra,
        ],
        "b0undary",
      );
      return fetch(`${base}/api/v1/runs/multipart`, {
        method: "POST",
        headers: { ...auth, "content-type": "multipart/form-data; boundary=b0undary" },
        body,
      });
    };
    const first = await post([
      { name: `attachment.${id}.log`, data: "first", contentType: "text/plain; length=5" },
    ]);
    expect(first.status).toBe(202);
    const again = await post([
      { name: `attachment.${id}.log`, data: "second", contentType: "text/plain; length=6" },
      { name: `attachment.${id}.bad.name`, data: "x", contentType: "text/plain" },
      { name: `attachment.${id}.typed`, data: "x", contentType: "not a type" },
    ]);
    expect(again.status).toBe(202);
    const answer = (await again.json()) as { errors: { loc: string[]; msg: string }[] };
    expect(answer.errors.map((e) => e.loc[1]).sort()).toEqual([
      `attachment.${id}.bad.name`,
      `attachment.${id}.typed`,
    ]);
    const run = await getRun(id);
    expect(Object.keys(run.s3_urls)).toEqual(["attachment.log"]);
    expect(new TextDecoder().decode((await bytesOf(run.s3_urls["attachment.log"].presigned_url)).bytes)).toBe(
      "second",
    );
  });

  it("deleting the project deletes the attachments' objects with its runs", async () => {
    const project = `attachments-purge-${crypto.randomUUID().slice(0, 8)}`;
    const id = await traced(project, { photo: ["image/png", png] });
    await waitFor("the attachment", async () => Object.keys((await getRun(id)).s3_urls ?? {}).length === 1);
    const s3 = s3For(facts);
    const prefix = `payloads/${facts.tenant_id}/runs/${id}/attachments/`;
    const listed = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: facts.s3.bucket, Prefix: prefix }))).KeyCount ?? 0;
    expect(await listed()).toBe(1);
    const projectId = (await client.readProject({ projectName: project })).id;
    expect((await call("DELETE", `/api/v1/sessions/${projectId}`, { headers: auth })).status).toBe(202);
    await waitFor(
      "the run to go",
      async () => (await call("GET", `/api/v1/runs/${id}`, { headers: auth })).status === 404,
    );
    await waitFor("the attachment's object to go", async () => (await listed()) === 0);
  });
});
