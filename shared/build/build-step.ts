import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { config } from "../config.ts";
import { BuildError } from "../errors.ts";
import { BufferedLog, LOG_TYPE } from "./buffered-log.ts";
import { type BuildJob, type BuildResult, type BuildUrls, packArtifact } from "./build-exchange.ts";
import { tenantCacheDir } from "./dep-cache.ts";
import { npmrcSecrets } from "./npm-env.ts";
import { fetchSource } from "./source.ts";
import { runSourceBuild } from "./source-build-process.ts";

// The build step (CodeBuild's command in AWS, a child process locally): fetch the repository, run the untrusted
// step on it (source-build-process.ts), send the artifact. It reaches nothing but its presigned URLs — no table,
// key or other revision's objects — so code that escapes the untrusted step finds no credential here.

async function send(url: string, method: "PUT" | "DELETE", body?: Uint8Array | string, type?: string) {
  const res = await fetch(url, {
    method,
    ...(body !== undefined ? { body } : {}),
    ...(type ? { headers: { "content-type": type } } : {}),
  });
  if (!res.ok) throw new Error(`${method} of a build object answered ${res.status}`);
}

async function readJob(urls: BuildUrls): Promise<BuildJob> {
  const res = await fetch(urls.job);
  if (!res.ok) throw new Error(`the build's job could not be read (${res.status})`);
  const job = (await res.json()) as BuildJob;
  // Read once: what it holds (token, secrets) is not left for anything that runs after this.
  await send(urls.jobDelete, "DELETE").catch(() => undefined);
  return job;
}

/** Runs one build; the outcome goes to the result URL, so the step fails only when it could not report. */
export async function runBuildStep(urls: BuildUrls, tenant: string): Promise<BuildResult> {
  const log = new BufferedLog((body) => send(urls.log, "PUT", body, LOG_TYPE));
  const work = await mkdtemp(join(tmpdir(), "revision-build-"));
  let result: BuildResult;
  try {
    const job = await readJob(urls);
    const src = join(work, "src");
    const { commit } = await fetchSource({
      repoUrl: job.repoUrl,
      ...(job.ref ? { ref: job.ref } : {}),
      dest: src,
      ...(job.token ? { token: job.token } : {}),
      allowLocal: config.localMode,
      localRoots: job.localRoots ?? [],
      log: log.line,
    });
    const out = join(work, "out");
    const cacheDir = tenantCacheDir(tenant);
    await runSourceBuild(
      {
        src,
        out,
        scratch: join(work, "scratch"),
        ...(cacheDir ? { cacheDir } : {}),
        graphConfigPath: job.graphConfigPath,
        npmSecrets: await npmrcSecrets(src, async () => job.secrets),
        lambdaRuntimes: job.lambdaRuntimes,
      },
      log.line,
      `build:${tenant}`,
    );
    await send(urls.artifact, "PUT", await packArtifact(out), "application/gzip");
    result = { ok: true, ...(commit ? { commit } : {}) };
  } catch (err) {
    const expected = err instanceof BuildError;
    result = { ok: false, error: String((err as Error)?.message ?? err).slice(0, 4000), expected };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  // The log is whole before the result says the build ended: the platform appends to it then.
  await log.close();
  await send(urls.result, "PUT", JSON.stringify(result), "application/json");
  return result;
}
