import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIn, standInEndpoint } from "../../../test/helpers/aws-stand-in.ts";
import { staleRuntimes } from "./layer-check.ts";

// Issue 26: runtimes kept the old layer version after a platform upgrade. Lambda's function listing has no local
// stand-in (local runtimes run the platform's code of the moment), so a stand-in endpoint answers ListFunctions
// in two pages.
const LAYER = (v: number) => `arn:aws:lambda:eu-west-1:123456789012:layer:agent-platform-runtime:${v}`;
const PAGES: Record<string, unknown> = {
  "": {
    Functions: [
      { FunctionName: "agent-rt-old", Layers: [{ Arn: LAYER(3) }] },
      { FunctionName: "agent-rt-new", Layers: [{ Arn: LAYER(4) }] },
      { FunctionName: "someone-else", Layers: [{ Arn: LAYER(1) }] },
    ],
    NextMarker: "m2",
  },
  m2: {
    Functions: [
      { FunctionName: "agent-rt-bare" },
      { FunctionName: "agent-rt-new2", Layers: [{ Arn: LAYER(4) }] },
    ],
  },
};
let standIn: StandIn;
beforeAll(async () => {
  standIn = await standInEndpoint("AWS_ENDPOINT_URL_LAMBDA", (req, res) => {
    const marker = new URL(req.url ?? "/", "http://x").searchParams.get("Marker") ?? "";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(PAGES[marker]));
  });
});
afterAll(() => standIn.close());

describe("runtimes after a platform upgrade", () => {
  it("are stale when their function lacks the platform's current layer version, over every page", async () => {
    expect(await staleRuntimes(LAYER(4))).toEqual(["old", "bare"]);
  });
});
