import { describe, expect, it } from "vitest";
import { endpointProblem, endpointUrlProblem } from "./ssrf.ts";

// The guard's rules beyond destinations' (shared/export/destinations*.test.ts test the address checks).
describe("endpointUrlProblem rules", () => {
  it("names the field it checks", () => {
    expect(endpointUrlProblem("http://10.0.0.1/token", false, { field: "token_url" })).toBe(
      "token_url must be a public endpoint",
    );
    expect(endpointUrlProblem("nope", false, { field: "api_url" })).toBe("api_url is not a valid URL");
  });

  it("httpsOnly refuses http outside local mode, and allows it in local mode", () => {
    const rules = { field: "token_url", httpsOnly: true };
    expect(endpointUrlProblem("http://idp.example.com/token", false, rules)).toBe(
      "token_url must be an https URL",
    );
    expect(endpointUrlProblem("https://idp.example.com/token", false, rules)).toBeUndefined();
    expect(endpointUrlProblem("http://127.0.0.1:9/token", true, rules)).toBeUndefined();
  });

  it("checks resolved addresses under the same field name", async () => {
    const resolve = async () => ["169.254.169.254"];
    expect(await endpointProblem("https://meta.example.com", false, resolve, { field: "api_url" })).toBe(
      "api_url must be a public endpoint",
    );
  });
});
