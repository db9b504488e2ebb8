import { describe, expect, it } from "vitest";
import { pathThrough } from "./graph-path.ts";

describe("edge paths", () => {
  it("a two-point route is a straight line", () => {
    expect(
      pathThrough([
        { x: 0, y: 0 },
        { x: 0, y: 10 },
      ]),
    ).toBe("M0,0 L0,10");
  });

  it("a longer route curves at its inner points and ends on the last one", () => {
    expect(
      pathThrough([
        { x: 0, y: 0 },
        { x: 10, y: 10 },
        { x: 20, y: 10 },
        { x: 30, y: 0 },
      ]),
    ).toBe("M0,0 Q10,10 15,10 Q20,10 25,5 L30,0");
  });

  it("no route, no path", () => {
    expect(pathThrough([{ x: 1, y: 1 }])).toBe("");
  });
});
