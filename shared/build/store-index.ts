import { access, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { BuildError } from "../errors.ts";
import type { BundledModule } from "./bundle.ts";
import type { StoreConfig } from "./graph-config.ts";
import { isWithin } from "./paths.ts";

// langgraph.json `store.index` at build time: the embeddings named by `embed` become a module of the artifact
// (`store/embed.mjs`), which only the deployment's runtime imports (shared/agent/store/search-index.ts).
// `embed` is a module path ("./src/embeddings.ts:embeddings": an Embeddings object with embedDocuments and
// embedQuery, or a function from texts to vectors), or a provider string ("openai:text-embedding-3-small").
// A provider's embeddings call its API at run time (network and the provider's key, a deployment secret), and
// need its LangChain package: a provider string builds only when the repository installed that package, and
// the build then bundles a module constructing the provider's class with the model; otherwise the build fails
// saying which package to add (or to point `embed` at a module of the repository's own).

/** What the runtime reads of store.index: the bundled embeddings, the vector size and the default fields. */
export interface StoreIndexManifest {
  embed: BundledModule;
  dims: number;
  fields?: string[];
}

/** Providers a provider string may name: their LangChain package and Embeddings class. */
const PROVIDERS: Record<string, { pkg: string; cls: string }> = {
  openai: { pkg: "@langchain/openai", cls: "OpenAIEmbeddings" },
  azure_openai: { pkg: "@langchain/openai", cls: "AzureOpenAIEmbeddings" },
  cohere: { pkg: "@langchain/cohere", cls: "CohereEmbeddings" },
  google_genai: { pkg: "@langchain/google-genai", cls: "GoogleGenerativeAIEmbeddings" },
  google_vertexai: { pkg: "@langchain/google-vertexai", cls: "VertexAIEmbeddings" },
  bedrock: { pkg: "@langchain/aws", cls: "BedrockEmbeddings" },
  mistralai: { pkg: "@langchain/mistralai", cls: "MistralAIEmbeddings" },
  ollama: { pkg: "@langchain/ollama", cls: "OllamaEmbeddings" },
};

/** "openai:text-embedding-3-small" → {provider, model}; a module path ("./x.ts:e", "src/x.ts:e") → undefined. */
export function providerSpec(embed: string): { provider: string; model: string } | undefined {
  const m = /^([a-z][a-z0-9_-]*):([^/\\]+)$/i.exec(embed.trim());
  if (!m || /\.[cm]?[jt]sx?$/i.test(m[1]!)) return undefined;
  return { provider: m[1]!.toLowerCase(), model: m[2]! };
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** The folder holding node_modules/<pkg>, from `fromDir` up to the repository's root. */
async function installedFrom(repoDir: string, fromDir: string, pkg: string): Promise<string | undefined> {
  for (let dir = fromDir; isWithin(repoDir, dir); dir = path.dirname(dir)) {
    if (await exists(path.join(dir, "node_modules", pkg, "package.json"))) return dir;
    if (dir === repoDir || dir === path.dirname(dir)) break;
  }
  return undefined;
}

/**
 * The store.index of the manifest: its `embed` bundled through `addEntry` (bundle.ts). A provider string is
 * turned into a module under the config folder's node_modules (beside the provider's package it imports).
 */
export async function storeIndexEntry(opts: {
  index: NonNullable<StoreConfig["index"]>;
  repoDir: string;
  configDir: string;
  addEntry: (name: string, spec: string, what: string) => Promise<BundledModule>;
  log: (line: string) => void;
}): Promise<StoreIndexManifest> {
  const { index } = opts;
  const fields = index.fields?.length ? { fields: index.fields } : {};
  const provider = providerSpec(index.embed);
  if (!provider)
    return {
      embed: await opts.addEntry("store/embed", index.embed, "store.index.embed"),
      dims: index.dims,
      ...fields,
    };
  const known = Object.hasOwn(PROVIDERS, provider.provider) ? PROVIDERS[provider.provider] : undefined;
  if (!known)
    throw new BuildError(
      `store.index.embed: unknown embeddings provider "${provider.provider}" (known: ${Object.keys(PROVIDERS).join(", ")}); ` +
        'point embed at a module of the repository instead, like "./src/embeddings.ts:embeddings"',
    );
  const configDir = path.resolve(opts.configDir);
  if (!(await installedFrom(path.resolve(opts.repoDir), configDir, known.pkg)))
    throw new BuildError(
      `store.index.embed "${index.embed}" needs ${known.pkg}, which the repository does not install: add it to ` +
        "package.json (its embeddings call the provider's API at run time, with its key from the deployment's " +
        'secrets), or point embed at a module of the repository, like "./src/embeddings.ts:embeddings"',
    );
  const generated = path.join(configDir, "node_modules", ".langgraph-platform", "embeddings.mjs");
  await mkdir(path.dirname(generated), { recursive: true });
  await writeFile(
    generated,
    `import { ${known.cls} } from ${JSON.stringify(known.pkg)};\n` +
      `export const embeddings = new ${known.cls}({ model: ${JSON.stringify(provider.model)} });\n`,
  );
  opts.log(`store.index: ${known.cls} of ${known.pkg}, model ${provider.model}, ${index.dims} dimensions`);
  return {
    embed: await opts.addEntry(
      "store/embed",
      "./node_modules/.langgraph-platform/embeddings.mjs:embeddings",
      "store.index.embed",
    ),
    dims: index.dims,
    ...fields,
  };
}
