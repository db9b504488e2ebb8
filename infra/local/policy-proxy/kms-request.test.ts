import { describe, expect, it } from "vitest";
import { kmsAuthorization } from "./kms-request.ts";

const KEY = "arn:aws:kms:us-east-1:000000000000:key/local-secrets";

describe("KMS request reader", () => {
  it("reads a Decrypt as kms:Decrypt on the secrets key with each context pair as a condition key", () => {
    const body = JSON.stringify({
      CiphertextBlob: "AAAA",
      EncryptionContext: { tenant_id: "t", deployment_id: "d" },
    });
    expect(kmsAuthorization("TrentService.Decrypt", body, KEY).authorization).toEqual({
      action: "kms:Decrypt",
      resource: KEY,
      context: { "kms:EncryptionContext:tenant_id": "t", "kms:EncryptionContext:deployment_id": "d" },
    });
  });

  it("refuses every other KMS action, and a context that is not a map of strings", () => {
    for (const target of ["TrentService.GenerateDataKey", "TrentService.Encrypt", undefined])
      expect(() => kmsAuthorization(target, "{}", KEY)).toThrow(/Decrypt only/);
    for (const ctx of [[], "x", null, { a: 1 }])
      expect(() =>
        kmsAuthorization("TrentService.Decrypt", JSON.stringify({ EncryptionContext: ctx }), KEY),
      ).toThrow(/map of strings/);
    expect(() => kmsAuthorization("TrentService.Decrypt", "{", KEY)).toThrow(/not valid JSON/);
  });
});
