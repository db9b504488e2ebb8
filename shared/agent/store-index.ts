import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { artifactDir, artifactManifest } from "./runtime/artifact.ts";

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

let loaded: Promise<StoreIndex | undefined> | undefined;

/** The deployment's index, if its langgraph.json has store.index (imported once, on first use). */
export function storeIndex(): Promise<StoreIndex | undefined> {
  if (!loaded) {
    loaded = (async () => {
      const index = (await artifactManifest())?.store_index;
      const dir = artifactDir();
      if (!index || !dir) return undefined;
      const mod = await import(pathToFileURL(join(dir, index.embed.file)).href);
      return { dims: index.dims, fields: index.fields, ...asEmbeddings(mod[index.embed.export_name]) };
    })();
    loaded.catch(() => {
      loaded = undefined;
    });
  }
  return loaded;
}
