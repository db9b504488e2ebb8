import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ArtifactManifest } from "../../build/bundle.ts";

// The revision's artifact a runtime serves (its folder and manifest.json), for what the runtime reads of it
// besides the graphs: the http settings, the custom routes' app, the UI bundles, the store index and TTLs.
// Runtime code only: its entry point makes one (runtime/serve.ts) and hands it to the deployment it serves.

export class RuntimeArtifact {
  private read: Promise<ArtifactManifest> | undefined;

  constructor(readonly dir: string) {}

  /** The artifact's manifest.json (read once; a failed read is tried again next time). */
  manifest(): Promise<ArtifactManifest> {
    if (!this.read) {
      const read = readFile(join(this.dir, "manifest.json"), "utf8").then(
        (t) => JSON.parse(t) as ArtifactManifest,
      );
      this.read = read;
      read.catch(() => {
        if (this.read === read) this.read = undefined;
      });
    }
    return this.read;
  }
}

/** The manifest of a runtime's artifact; undefined outside a runtime (no artifact). */
export const artifactManifest = (
  artifact: RuntimeArtifact | undefined,
): Promise<ArtifactManifest | undefined> => (artifact ? artifact.manifest() : Promise.resolve(undefined));

/** Is langgraph.json `http.<flag>` set for the revision this runtime serves? */
export async function httpFlag(artifact: RuntimeArtifact | undefined, flag: string): Promise<boolean> {
  return (await artifactManifest(artifact))?.http?.[flag] === true;
}
