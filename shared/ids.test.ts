import { describe, expect, it } from "vitest";
import { uuidv5, uuidv7 } from "./ids.ts";

describe("uuidv5", () => {
  it("matches the RFC 9562 example (DNS namespace, www.example.com)", () => {
    expect(uuidv5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });
  it("is stable per name and differs between names", () => {
    const ns = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";
    expect(uuidv5("a", ns)).toBe(uuidv5("a", ns));
    expect(uuidv5("a", ns)).not.toBe(uuidv5("b", ns));
    expect(uuidv5("a", ns)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("uuidv7", () => {
  it("is a version 7 UUID carrying its millisecond timestamp", () => {
    const at = Date.UTC(2026, 10, 23, 1, 2, 3, 4);
    const id = uuidv7(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(at);
  });
  it("sorts in creation order, also many within one millisecond", () => {
    const at = Date.now() + 10_000;
    const ids = Array.from({ length: 500 }, () => uuidv7(at));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(uuidv7(at + 5) > ids.at(-1)!).toBe(true);
  });
});
