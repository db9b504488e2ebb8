import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { s3 } from "../aws/clients.ts";
import { config } from "../config.ts";
import { privateDir } from "../containment/private-dir.ts";

// A revision's build artifact: the bundled graphs and their manifest, as objects under the revision's prefix
// in the artifact bucket. Deploy steps and agent servers materialize it into a local folder once.

/** Every file below `dir`, as paths. */
export async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await files(path)));
    else if (e.isFile()) out.push(path);
  }
  return out;
}

/** Stores an artifact's files (paths relative to the artifact, checked by unpackArtifact) under `prefix`. */
export async function uploadArtifact(
  entries: { path: string; data: Uint8Array }[],
  prefix: string,
): Promise<number> {
  // The manifest goes last: its presence means the artifact is complete.
  const list = [...entries].sort(
    (a, b) => Number(a.path.endsWith("manifest.json")) - Number(b.path.endsWith("manifest.json")),
  );
  for (const e of list)
    await s3().send(
      new PutObjectCommand({ Bucket: config.artifactBucket, Key: prefix + e.path, Body: e.data }),
    );
  return list.length;
}

/** The artifact's local folder, downloaded on first use (atomically: a folder appears whole or not at all). */
export async function materializeArtifact(prefix: string): Promise<string> {
  // A folder of this user's alone: artifacts hold deployments' code and their sealed environments' references.
  // Each sandbox passes through it to its own artifact (when the platform is root: shareWithSandbox).
  const root = await privateDir(join(tmpdir(), "agent-platform-artifacts"), { passThrough: true });
  const dir = join(root, prefix.replace(/[^\w-]+/g, "_"));
  if (existsSync(join(dir, "manifest.json"))) return dir;
  const staging = `${dir}.${process.pid}.${Date.now()}`;
  let token: string | undefined;
  let count = 0;
  do {
    const page = await s3().send(
      new ListObjectsV2Command({ Bucket: config.artifactBucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      const rel = o.Key!.slice(prefix.length);
      if (!rel || rel.split("/").includes("..")) continue;
      const target = join(staging, rel);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      const obj = await s3().send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: o.Key! }));
      await writeFile(target, await obj.Body!.transformToByteArray());
      count++;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  if (!count || !existsSync(join(staging, "manifest.json"))) {
    await rm(staging, { recursive: true, force: true });
    throw new Error(`the build artifact at ${prefix} is missing or incomplete`);
  }
  try {
    await rename(staging, dir);
  } catch {
    // Someone else materialized it first: theirs is the same artifact.
    await rm(staging, { recursive: true, force: true });
  }
  return dir;
}
