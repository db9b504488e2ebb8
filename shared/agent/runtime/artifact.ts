import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ArtifactManifest } from "../../deploy/bundle.ts";

// The revision's artifact a runtime serves (its folder and manifest.json), for what the runtime reads of it
// besides the graphs: the http settings, the custom routes' app and the UI bundles. Runtime code only.
let dir: string | undefined;
let manifest: Promise<ArtifactManifest> | undefined;

/** Set once at start (serve.ts): where the revision's artifact is. */
export function serveArtifact(artifactDir: string): void {
  dir = artifactDir;
  manifest = undefined;
}

/** The artifact's folder; undefined outside a runtime. */
export const artifactDir = (): string | undefined => dir;

/** The artifact's manifest.json; undefined outside a runtime. */
export function artifactManifest(): Promise<ArtifactManifest | undefined> {
  if (dir === undefined) return Promise.resolve(undefined);
  if (!manifest) {
    const read = readFile(join(dir, "manifest.json"), "utf8").then((t) => JSON.parse(t) as ArtifactManifest);
    manifest = read;
    read.catch(() => {
      if (manifest === read) manifest = undefined;
    });
  }
  return manifest;
}

/** Is langgraph.json `http.<flag>` set for the revision this runtime serves? */
export async function httpFlag(flag: string): Promise<boolean> {
  return (await artifactManifest())?.http?.[flag] === true;
}
