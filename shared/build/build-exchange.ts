import { readFile } from "node:fs/promises";
import { relative, sep } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import { MAX_REVISION_BYTES } from "../aws/lambda-limits.ts";
import { BuildError } from "../errors.ts";
import { files } from "./artifacts.ts";

// What the platform and the build step (CodeBuild in AWS, a child process locally) hand each other. The build
// step holds no credential: it gets presigned URLs for its own revision's objects only, as environment values,
// and reads its job (repository, token, the deployment's secrets) from a short-lived object it deletes first.

/** The environment variables of the build step: one presigned URL each, plus the workspace (its dependency cache). */
export const BUILD_ENV = {
  job: "BUILD_JOB_URL",
  jobDelete: "BUILD_JOB_DELETE_URL",
  log: "BUILD_LOG_URL",
  artifact: "BUILD_ARTIFACT_URL",
  result: "BUILD_RESULT_URL",
  tenant: "TENANT_ID",
} as const;
export type BuildUrls = Record<Exclude<keyof typeof BUILD_ENV, "tenant">, string>;

/** One build of a revision: a re-driven pipeline's build never reads what an earlier, orphaned one sends. */
export interface BuildAttempt {
  tenant_id: string;
  deployment_id: string;
  id: string;
  attempt: string;
}
export const ATTEMPT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The folder of one build's exchange, beside (not under) its revision's artifact prefix. */
export const exchangePrefix = (a: BuildAttempt) =>
  `builds/${a.tenant_id}/${a.deployment_id}/${a.id}/${a.attempt}/`;

export function exchangeKeys(a: BuildAttempt) {
  const base = exchangePrefix(a);
  return {
    job: `${base}job.json`,
    result: `${base}result.json`,
    artifact: `${base}artifact.json.gz`,
  };
}

export interface BuildJob {
  repoUrl: string;
  ref?: string;
  /** The integration's token for an https repository. */
  token?: string;
  /** The deployment's secrets: the build hands its untrusted step only those an .npmrc names. */
  secrets: Record<string, string>;
  graphConfigPath: string;
  lambdaRuntimes: boolean;
  /** Local cloud: the folders the workspace was granted, which the build re-checks after resolving symlinks. */
  localRoots?: string[];
}

export const buildResult = z.union([
  z.object({ ok: z.literal(true), commit: z.string().max(100).optional() }),
  z.object({ ok: z.literal(false), error: z.string().max(4000), expected: z.boolean() }),
]);
export type BuildResult = z.infer<typeof buildResult>;

/** Unpacked, an artifact may hold at most what Lambda's code limit leaves beside the runtime layer. */
export const MAX_ARTIFACT_BYTES = MAX_REVISION_BYTES;

const packed = z.object({
  files: z
    .array(
      z.object({
        path: z
          .string()
          .min(1)
          .max(1024)
          .refine(
            (p) =>
              !p.startsWith("/") &&
              !p.includes("\\") &&
              !p.includes("\0") &&
              p.split("/").every((s) => s !== "" && s !== "." && s !== ".."),
            "not a relative path inside the artifact",
          ),
        data: z.string().base64(),
      }),
    )
    .max(100_000),
});

/** The artifact's files as one object (gzip of JSON), so one presigned PUT carries it whole. */
export async function packArtifact(dir: string): Promise<Buffer> {
  const list = await files(dir);
  const entries = await Promise.all(
    list.map(async (f) => ({
      path: relative(dir, f).split(sep).join("/"),
      data: (await readFile(f)).toString("base64"),
    })),
  );
  return gzipSync(JSON.stringify({ files: entries }));
}

/** The files a build step sent (untrusted: each path stays inside the artifact, the size is bounded). */
export function unpackArtifact(body: Uint8Array): { path: string; data: Buffer }[] {
  let text: string;
  try {
    text = gunzipSync(body, { maxOutputLength: Math.ceil((MAX_ARTIFACT_BYTES * 4) / 3) + 1024 }).toString(
      "utf8",
    );
  } catch (err) {
    throw new BuildError(`the build's artifact is not readable: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BuildError("the build's artifact is not readable: not JSON");
  }
  const parsed = packed.safeParse(json);
  if (!parsed.success)
    throw new BuildError(
      `the build's artifact is not readable: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    );
  const seen = new Set<string>();
  return parsed.data.files.map((f) => {
    if (seen.has(f.path)) throw new BuildError(`the build's artifact names ${f.path} twice`);
    seen.add(f.path);
    return { path: f.path, data: Buffer.from(f.data, "base64") };
  });
}
