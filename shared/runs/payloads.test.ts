import { describe, expect, it, vi } from "vitest";

// A run item's offloaded field whose S3 object is gone (replaced by a newer version, or purged) reads as absent;
// any other S3 failure is still an error. S3 is mocked: the fault cannot be caused on demand otherwise.
const sent: string[] = [];
vi.mock("../aws/clients.ts", () => ({
  s3: () => ({
    send: async (cmd: { input: { Key: string } }) => {
      sent.push(cmd.input.Key);
      if (cmd.input.Key === "gone")
        throw Object.assign(new Error("The specified key does not exist."), { name: "NoSuchKey" });
      if (cmd.input.Key === "broken")
        throw Object.assign(new Error("We encountered an internal error"), { name: "InternalError" });
      return { Body: { transformToString: async () => '{"a":1}' } };
    },
  }),
}));
const { loadField } = await import("./payloads.ts");

describe("loadField", () => {
  it("inline, offloaded, and an offloaded object that is gone", async () => {
    expect(await loadField({ inputs_json: '{"x":2}' } as never, "inputs")).toEqual({ x: 2 });
    expect(await loadField({ inputs_json: null, inputs_ref: "here" } as never, "inputs")).toEqual({ a: 1 });
    expect(await loadField({ inputs_json: null, inputs_ref: "gone" } as never, "inputs")).toBeUndefined();
    await expect(loadField({ inputs_json: null, inputs_ref: "broken" } as never, "inputs")).rejects.toThrow(
      /internal/,
    );
    expect(sent).toEqual(["here", "gone", "broken"]);
  });
});
