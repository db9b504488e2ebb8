import { describe, expect, it } from "vitest";
import { checkpointPk } from "../../records/agent.ts";
import { s3ThreadPrefix } from "../../records/checkpoint-keys.ts";
import { ownRef, refsOf } from "./blobs.ts";

// ownRef: a checkpoint item's reference counts only under its own thread's prefix, read as a path-resolving backend
// would read it. A runtime writes these items itself (its role's LeadingKeys), so the key and the reference are both
// its choice.
const scope = "tenant-a#dep-1";
const victim = `${s3ThreadPrefix("tenant-b#dep-2", "t1")}%/1f0/values/messages`;

describe("ownRef", () => {
  it("keeps a reference under the item's own thread", () => {
    const ref = `${s3ThreadPrefix(scope, "t1")}%/1f0/values/messages`;
    expect(ownRef({ PK: checkpointPk(scope, "t1"), value_ref: ref }, "value")).toBe(ref);
  });

  it("refuses another thread sharing a prefix of the id (t1 and t10)", () => {
    const ref = `${s3ThreadPrefix(scope, "t10")}%/1f0/values/messages`;
    expect(ownRef({ PK: checkpointPk(scope, "t1"), value_ref: ref }, "value")).toBeUndefined();
  });

  it.each([".", ".."])(
    "refuses every reference of a thread named %j, whose prefix climbs out of its scope",
    (t) => {
      // checkpoints/<scope>/../<victim's scope>/… starts with the prefix of thread "..", and resolves to the victim's.
      const climbing = `${s3ThreadPrefix(scope, t)}${victim.slice("checkpoints/".length)}`;
      const item = { PK: checkpointPk(scope, t), SK: "C#%#1f0#V#messages", value_ref: climbing };
      expect(ownRef(item, "value")).toBeUndefined();
      expect(refsOf(item)).toEqual([]);
    },
  );

  it("refuses `..` after the prefix and a reference of another workspace", () => {
    const pk = checkpointPk(scope, "t1");
    expect(ownRef({ PK: pk, value_ref: `${s3ThreadPrefix(scope, "t1")}../../x` }, "value")).toBeUndefined();
    expect(ownRef({ PK: pk, value_ref: victim }, "value")).toBeUndefined();
  });
});
