import { describe, expect, it } from "vitest";
import { withoutPlatformKeys } from "./api-keys.ts";

// What a deployment's runtime (its custom auth and app included) is handed: the request's headers without any
// platform key, whether the key let the request in or not; an app's own token stays.
describe("withoutPlatformKeys", () => {
  const key = "lsv2_pt_abc";
  const operatorKey = "an-operator-chosen-key";
  const known = async (v: string) => v === operatorKey;
  const strip = (h: Record<string, string | undefined>) => withoutPlatformKeys(h, known);

  it("drops X-Api-Key, and an Authorization header only when it carries a key", async () => {
    expect(await strip({ "x-api-key": key, accept: "text/event-stream" })).toEqual({
      accept: "text/event-stream",
    });
    expect(await strip({ authorization: `Bearer ${key}` })).toEqual({});
    // An end user's own token (custom auth) travels on when the platform key came in X-Api-Key.
    expect(await strip({ "x-api-key": key, authorization: "Bearer user-token" })).toEqual({
      authorization: "Bearer user-token",
    });
  });

  it("drops a key the store knows whatever its shape, and one of the key shape the store does not know", async () => {
    expect(await strip({ authorization: `Bearer ${operatorKey}`, "x-api-key": "app-value" })).toEqual({
      "x-api-key": "app-value",
    });
    expect(await strip({ "x-api-key": "lsv2_sk_revoked" })).toEqual({});
  });

  it("finds a key among several joined values, in any header-name case", async () => {
    expect(await strip({ "x-api-key": `app-value, ${operatorKey}` })).toEqual({});
    expect(await strip({ "X-Api-Key": `x, ${key}`, Authorization: `bearer ${key}` })).toEqual({});
    // Too many values to look up one by one: dropped.
    expect(await strip({ "x-api-key": "a, b, c, d, e" })).toEqual({});
    // A key in a scheme the platform does not read is still a key; another scheme's credentials stay.
    expect(await strip({ authorization: `Token ${key}` })).toEqual({});
    const digest = 'Digest username="u", realm="r", nonce="n", uri="/", response="x"';
    expect(await strip({ authorization: digest })).toEqual({ authorization: digest });
  });

  it("leaves the caller's headers object as it was", async () => {
    const headers = { "x-api-key": key };
    await strip(headers);
    expect(headers).toEqual({ "x-api-key": key });
  });
});
