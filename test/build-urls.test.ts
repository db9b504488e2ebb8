import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { s3 } from "../shared/aws/clients.ts";
import { BUILD_ENV, exchangeKeys } from "../shared/build/build-exchange.ts";
import { config } from "../shared/config.ts";
import { openBuildExchange } from "../shared/control/build-exchange.ts";
import { logKey } from "../shared/control/revisions.ts";
import "./helpers/cloud.ts";

// Issue 25, deliver 5: the build step holds nothing but presigned URLs of its own revision's objects. Against
// the local cloud's S3 (which checks presigned signatures as S3 does: infra/local/s3-presigned.ts), each URL does
// its one thing on its one key.
const mine = { tenant_id: "t-build", deployment_id: "d-build", id: crypto.randomUUID() };
const other = { ...mine, id: crypto.randomUUID() };
const Bucket = () => config.artifactBucket;

async function urls() {
  const { attempt, env } = await openBuildExchange(mine, {
    repoUrl: "https://example.invalid/r.git",
    token: "tok-secret",
    secrets: { NPM_TOKEN: "npm-secret" },
    graphConfigPath: "langgraph.json",
    lambdaRuntimes: false,
  });
  return { attempt, env: Object.fromEntries(env.map((v) => [v.Name, v.Value])) as Record<string, string> };
}

/** The same signed request aimed at another key: only the path changes. */
function retarget(url: string, from: string, to: string): string {
  const out = url.replace(encodeURI(from), encodeURI(to));
  expect(out).not.toBe(url);
  return out;
}

describe("the build's presigned URLs", () => {
  it("hold no credential and name only its own revision's keys", async () => {
    const { env } = await urls();
    expect(Object.keys(env).sort()).toEqual(Object.values(BUILD_ENV).sort());
    const text = Object.values(env).join("\n");
    for (const secret of ["tok-secret", "npm-secret"]) expect(text).not.toContain(secret);
    for (const [name, url] of Object.entries(env))
      if (name !== BUILD_ENV.tenant)
        expect(new URL(url).pathname, name).toMatch(
          new RegExp(`/${mine.tenant_id}/${mine.deployment_id}/${mine.id}/`),
        );
  });

  it("read the job once: after the build deletes it, its URL finds nothing", async () => {
    const { env } = await urls();
    const job = await fetch(env[BUILD_ENV.job]!);
    expect(job.status).toBe(200);
    expect(await job.json()).toMatchObject({ token: "tok-secret", secrets: { NPM_TOKEN: "npm-secret" } });
    expect((await fetch(env[BUILD_ENV.jobDelete]!, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(env[BUILD_ENV.job]!)).status).toBe(404);
  });

  it("write the revision's artifact, log and result, and nothing else", async () => {
    const { attempt, env } = await urls();
    const put = (url: string, body: string) => fetch(url, { method: "PUT", body });
    const keys = exchangeKeys({ ...mine, attempt });
    expect((await put(env[BUILD_ENV.artifact]!, "artifact")).status).toBe(200);
    const stored = await s3().send(new GetObjectCommand({ Bucket: Bucket(), Key: keys.artifact }));
    expect(await stored.Body!.transformToString()).toBe("artifact");
    // Another revision's artifact, the deployment's other objects, or a read with a write URL: refused.
    const theirs = exchangeKeys({ ...other, attempt }).artifact;
    await s3().send(new PutObjectCommand({ Bucket: Bucket(), Key: theirs, Body: "theirs" }));
    expect((await put(retarget(env[BUILD_ENV.artifact]!, keys.artifact, theirs), "forged")).status).toBe(403);
    expect(
      (await put(retarget(env[BUILD_ENV.result]!, keys.result, `artifacts/${other.tenant_id}/x`), "f"))
        .status,
    ).toBe(403);
    expect((await fetch(env[BUILD_ENV.log]!)).status).toBe(403);
    const logUrl = retarget(env[BUILD_ENV.log]!, logKey(mine, "build"), logKey(other, "build"));
    expect(
      (
        await fetch(logUrl, {
          method: "PUT",
          body: "x",
          headers: { "content-type": "text/plain; charset=utf-8" },
        })
      ).status,
    ).toBe(403);
    const after = await s3().send(new GetObjectCommand({ Bucket: Bucket(), Key: theirs }));
    expect(await after.Body!.transformToString()).toBe("theirs");
  });
});
