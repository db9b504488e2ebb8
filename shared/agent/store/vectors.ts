// The pure parts of the store's semantic search (store-index.ts): which texts of an item are embedded, how its
// vectors are kept in its DynamoDB record (one binary attribute), and how items rank against a query.

/** One step of a field path: a key, every element of a list (`[*]`), or one element (`[2]`, `[-1]` = last). */
type Step = { key: string } | { each: true } | { at: number };

/** "chapters[*].content" → key chapters, each, key content. "$" (or "") is the whole value. */
export function parseFieldPath(path: string): Step[] {
  const steps: Step[] = [];
  if (path === "$" || path === "") return steps;
  for (const part of path.split(".")) {
    const m = /^([^[\]]*)((?:\[(?:\*|-?\d+)\])*)$/.exec(part);
    if (!m) throw new Error(`bad field path ${JSON.stringify(path)}`);
    if (m[1]) steps.push({ key: m[1] });
    for (const [, index] of m[2]!.matchAll(/\[(\*|-?\d+)\]/g))
      steps.push(index === "*" ? { each: true } : { at: Number(index) });
  }
  return steps;
}

const asText = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v);

/** The texts at `path` in `value`: one per value found (`[*]` may find several); strings as they are, others as JSON. */
export function textsAt(value: unknown, path: string): string[] {
  let found: unknown[] = [value];
  for (const step of parseFieldPath(path)) {
    const next: unknown[] = [];
    for (const v of found) {
      if ("key" in step) {
        if (v !== null && typeof v === "object" && !Array.isArray(v) && step.key in v)
          next.push((v as Record<string, unknown>)[step.key]);
      } else if (Array.isArray(v)) {
        if ("each" in step) next.push(...v);
        else {
          const i = step.at < 0 ? v.length + step.at : step.at;
          if (i >= 0 && i < v.length) next.push(v[i]);
        }
      }
    }
    found = next;
  }
  return found.map(asText).filter((t): t is string => t !== undefined && t !== "");
}

/** Every text of `value` to embed for `fields` (default: the whole value). */
export const textsToEmbed = (value: unknown, fields: string[] = ["$"]): string[] =>
  fields.flatMap((f) => textsAt(value, f));

/** Vectors as one attribute: float32 little-endian, back to back (dims × 4 bytes each). */
export function encodeVectors(vectors: number[][], dims: number): Uint8Array {
  const out = new Float32Array(vectors.length * dims);
  vectors.forEach((v, i) => {
    if (v.length !== dims)
      throw new Error(`store.index.dims is ${dims} but the embeddings gave a vector of ${v.length} numbers`);
    out.set(v, i * dims);
  });
  return new Uint8Array(out.buffer);
}

export function decodeVectors(bytes: Uint8Array, dims: number): Float32Array[] {
  const copy = new Float32Array(new Uint8Array(bytes).buffer);
  const out: Float32Array[] = [];
  for (let i = 0; i + dims <= copy.length; i += dims) out.push(copy.subarray(i, i + dims));
  return out;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Candidates ranked against a query vector: an item scores its best vector's cosine similarity; items without
 * vectors (put with `index: false`, or before the index existed) come after every scored one, without a score.
 */
export function rankByQuery<T>(
  candidates: { item: T; vectors: ArrayLike<number>[] }[],
  query: ArrayLike<number>,
): { item: T; score?: number }[] {
  const scored: { item: T; score: number }[] = [];
  const scoreless: { item: T }[] = [];
  for (const c of candidates) {
    if (!c.vectors.length) scoreless.push({ item: c.item });
    else scored.push({ item: c.item, score: Math.max(...c.vectors.map((v) => cosine(v, query))) });
  }
  scored.sort((a, b) => b.score - a.score);
  return [...scored, ...scoreless];
}
