import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { RuntimeArtifact } from "../artifact/artifact.ts";

// The store's embeddings index (langgraph.json store.index): the embeddings module the build bundled
// (deploy/store-index.ts), imported by the deployment's runtime only — it is the deployment's code. Platform
// processes serve no artifact, so for them there is no index.

export interface StoreIndex {
  dims: number;
  /** The fields embedded when a put names none (default: the whole value). */
  fields?: string[];
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

type EmbedFn = (texts: string[]) => Promise<number[][]> | number[][];
interface EmbeddingsLike {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/** The export as the reference server accepts it: an Embeddings object, or a function from texts to vectors. */
export function asEmbeddings(exported: unknown): EmbeddingsLike {
  const e = exported as Partial<EmbeddingsLike> | null | undefined;
  if (e && typeof e.embedDocuments === "function" && typeof e.embedQuery === "function")
    return {
      embedDocuments: (texts) => e.embedDocuments!(texts),
      embedQuery: (text) => e.embedQuery!(text),
    };
  if (typeof exported === "function") {
    const fn = exported as EmbedFn;
    return {
      embedDocuments: async (texts) => fn(texts),
      embedQuery: async (text) => (await fn([text]))[0]!,
    };
  }
  throw new Error(
    "store.index.embed: the export is neither Embeddings (embedDocuments, embedQuery) nor a function of texts",
  );
}

/** Each runtime artifact's index, imported once. */
const loaded = new WeakMap<RuntimeArtifact, Promise<StoreIndex | undefined>>();

/** The deployment's index, if its langgraph.json has store.index (imported once, on first use); none outside a runtime. */
export function storeIndex(artifact: RuntimeArtifact | undefined): Promise<StoreIndex | undefined> {
  if (!artifact) return Promise.resolve(undefined);
  let index = loaded.get(artifact);
  if (!index) {
    const load = (async () => {
      const found = (await artifact.manifest())?.store_index;
      if (!found) return undefined;
      const mod = await import(pathToFileURL(join(artifact.dir, found.embed.file)).href);
      return { dims: found.dims, fields: found.fields, ...asEmbeddings(mod[found.embed.export_name]) };
    })();
    loaded.set(artifact, load);
    load.catch(() => {
      if (loaded.get(artifact) === load) loaded.delete(artifact);
    });
    index = load;
  }
  return index;
}
