import { describe, expect, it } from "vitest";
import { asEmbeddings } from "./search-index.ts";
import { cosine, decodeVectors, encodeVectors, rankByQuery, textsAt, textsToEmbed } from "./vectors.ts";

const doc = {
  title: "Annual report",
  n: 3,
  tags: ["a", "b"],
  chapters: [{ content: "first" }, { content: "second" }, { other: 1 }],
  meta: { author: { name: "Ann" } },
};

describe("fields to embed", () => {
  it("$ (the default) is the whole value as JSON", () => {
    expect(textsToEmbed(doc)).toEqual([JSON.stringify(doc)]);
    expect(textsAt("plain", "$")).toEqual(["plain"]);
  });
  it("a dotted path reaches nested keys; strings stay strings, other values are JSON", () => {
    expect(textsAt(doc, "meta.author.name")).toEqual(["Ann"]);
    expect(textsAt(doc, "n")).toEqual(["3"]);
    expect(textsAt(doc, "meta.author")).toEqual(['{"name":"Ann"}']);
  });
  it("[*] takes every element, [i] one, [-1] the last", () => {
    expect(textsAt(doc, "chapters[*].content")).toEqual(["first", "second"]);
    expect(textsAt(doc, "tags[0]")).toEqual(["a"]);
    expect(textsAt(doc, "tags[-1]")).toEqual(["b"]);
    expect(textsAt(doc, "tags[*]")).toEqual(["a", "b"]);
  });
  it("a path that finds nothing gives no text", () => {
    expect(textsAt(doc, "missing")).toEqual([]);
    expect(textsAt(doc, "title.deeper")).toEqual([]);
    expect(textsAt(doc, "tags[5]")).toEqual([]);
  });
  it("several fields give their texts in order", () => {
    expect(textsToEmbed(doc, ["title", "chapters[*].content"])).toEqual(["Annual report", "first", "second"]);
  });
});

describe("vectors in a record", () => {
  it("round-trip as float32, dims × 4 bytes each", () => {
    const bytes = encodeVectors(
      [
        [1, 0.5, -2],
        [0, 0, 1],
      ],
      3,
    );
    expect(bytes.byteLength).toBe(2 * 3 * 4);
    expect(decodeVectors(bytes, 3).map((v) => [...v])).toEqual([
      [1, 0.5, -2],
      [0, 0, 1],
    ]);
  });
  it("a vector of another size than store.index.dims is an error naming both", () => {
    expect(() => encodeVectors([[1, 2]], 3)).toThrow(/dims is 3 .* 2 numbers/);
  });
});

describe("ranking by cosine similarity", () => {
  it("cosine: same direction 1, opposite -1, orthogonal 0, a zero vector 0", () => {
    expect(cosine([1, 2], [2, 4])).toBeCloseTo(1);
    expect(cosine([1, 0], [-3, 0])).toBeCloseTo(-1);
    expect(cosine([1, 0], [0, 5])).toBe(0);
    expect(cosine([0, 0], [1, 1])).toBe(0);
  });
  it("an item scores its best vector; best first; items without vectors last, without a score", () => {
    const ranked = rankByQuery(
      [
        { item: "none", vectors: [] },
        { item: "far", vectors: [[0, 1]] },
        {
          item: "near",
          vectors: [
            [0, 1],
            [1, 0.1],
          ],
        },
      ],
      [1, 0],
    );
    expect(ranked.map((r) => r.item)).toEqual(["near", "far", "none"]);
    expect(ranked[0]!.score).toBeCloseTo(cosine([1, 0.1], [1, 0]));
    expect(ranked[1]!.score).toBe(0);
    expect(ranked[2]).toEqual({ item: "none" });
  });
});

describe("the embeddings export", () => {
  it("an Embeddings object is used as it is", async () => {
    const e = asEmbeddings({
      embedDocuments: async (t: string[]) => t.map(() => [1]),
      embedQuery: async () => [2],
    });
    expect(await e.embedDocuments(["a", "b"])).toEqual([[1], [1]]);
    expect(await e.embedQuery("q")).toEqual([2]);
  });
  it("a function of texts embeds documents and the query", async () => {
    const e = asEmbeddings((texts: string[]) => texts.map((t) => [t.length]));
    expect(await e.embedDocuments(["ab", "c"])).toEqual([[2], [1]]);
    expect(await e.embedQuery("abcd")).toEqual([4]);
  });
  it("anything else is refused naming store.index.embed", () => {
    expect(() => asEmbeddings({ embed: 1 })).toThrow(/store\.index\.embed/);
  });
});
