import { readFile } from "node:fs/promises";
import path from "node:path";

// schemas.json, beside manifest.json in a revision's artifact: the graphs' JSON Schemas read from their
// TypeScript types at build time (ts-schemas.ts writes it; the deployment's runtime reads it).

export const SCHEMAS_FILE = "schemas.json";

type JsonSchema = Record<string, unknown>;
export type GraphTypeSchemas = Partial<Record<"state" | "input" | "output" | "config", JsonSchema>>;
export interface ExtractedSchemas extends GraphTypeSchemas {
  /** By namespace, as getSubgraphs names them ("node", "node|inner"). */
  subgraphs?: Record<string, GraphTypeSchemas>;
}
/** By graph id. */
export type SchemasFile = Record<string, ExtractedSchemas>;

/** The artifact's schemas.json in `dir`; none (an artifact built before it, or unreadable) is no schemas. */
export async function readSchemasFile(dir: string): Promise<SchemasFile> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(dir, SCHEMAS_FILE), "utf8"));
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as SchemasFile) : {};
  } catch {
    return {};
  }
}
