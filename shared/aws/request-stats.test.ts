import { describe, expect, it } from "vitest";
import { addRequestStats, type RequestStats } from "./request-stats.ts";

const stats = (n: number, command: string, shape: string): RequestStats => ({
  dynamodb: {
    requests: n,
    read_units: n,
    write_units: 2 * n,
    billed_write_units: 3 * n,
    commands: { [command]: { requests: n, units: n, billed: n } },
    shapes: { [shape]: n },
  },
  s3: { requests: n, puts: n, gets: 0 },
});

describe("request counts of several threads", () => {
  it("add up field by field, commands and shapes by name", () => {
    expect(
      addRequestStats(stats(1, "GetItem", "a"), stats(2, "GetItem", "b"), stats(4, "PutItem", "a")),
    ).toEqual({
      dynamodb: {
        requests: 7,
        read_units: 7,
        write_units: 14,
        billed_write_units: 21,
        commands: {
          GetItem: { requests: 3, units: 3, billed: 3 },
          PutItem: { requests: 4, units: 4, billed: 4 },
        },
        shapes: { a: 5, b: 2 },
      },
      s3: { requests: 7, puts: 7, gets: 0 },
    });
  });
});
