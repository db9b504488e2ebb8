import { describe, expect, it } from "vitest";
import { withoutApiKey } from "./api-keys.ts";

// What a deployment's runtime is handed: the request's headers without the platform key that authenticated it.
describe("withoutApiKey", () => {
  const key = "lsv2_pt_abc";
  it("drops X-Api-Key, and an Authorization header only when it carries the key", () => {
    expect(withoutApiKey({ "x-api-key": key, accept: "text/event-stream" })).toEqual({
      accept: "text/event-stream",
    });
    expect(withoutApiKey({ authorization: `Bearer ${key}` })).toEqual({});
    // An end user's own token (custom auth) travels on when the platform key came in X-Api-Key.
    expect(withoutApiKey({ "x-api-key": key, authorization: "Bearer user-token" })).toEqual({
      authorization: "Bearer user-token",
    });
  });

  it("leaves the caller's headers object as it was", () => {
    const headers = { "x-api-key": key };
    withoutApiKey(headers);
    expect(headers).toEqual({ "x-api-key": key });
  });
});
