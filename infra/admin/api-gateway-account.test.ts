import { describe, expect, it } from "vitest";
import { apiGatewayRoleRow } from "./api-gateway-account.ts";

// `npm run aws:preflight` with credentials: API Gateway refuses a REST API stage that logs while the account has no
// CloudWatch role (docs/aws.md step 3), so the app's first deploy would fail on it. The answer of GetAccount cannot
// be had here; what the preflight makes of it is tested.
describe("the preflight's API Gateway CloudWatch role check", () => {
  it("fails when the account has none and the app is not told to set it", () => {
    const row = apiGatewayRoleRow("", false);
    expect(row.ok).toBe(false);
    expect(row.subject).toMatch(/none .*apiGatewayAccountRole=create/);
  });

  it("passes when the account has one, or the app sets it", () => {
    const arn = "arn:aws:iam::123456789012:role/apigateway-cloudwatch";
    expect(apiGatewayRoleRow(arn, false)).toMatchObject({ ok: true, subject: `the account's: ${arn}` });
    expect(apiGatewayRoleRow("", true)).toMatchObject({ ok: true });
  });
});
