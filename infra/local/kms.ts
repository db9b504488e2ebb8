import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The local key service: one master key in DATA_DIR wraps data keys with AES-256-GCM, as KMS would.

/** A KMS JSON request's body: the members of the actions emulated (each reads its own; blobs in base64). */
export interface KmsRequest {
  NumberOfBytes?: number;
  KeySpec?: string;
  Plaintext?: string;
  CiphertextBlob?: string;
}
function required(value: string | undefined, member: string): string {
  if (value === undefined)
    throw Object.assign(new Error(`${member} is required`), { code: "ValidationException" });
  return value;
}

export class LocalKms {
  private readonly master: Buffer;
  constructor(dataDir: string) {
    const file = join(dataDir, "kms-master.key");
    if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600 });
    this.master = readFileSync(file);
  }
  encrypt(plaintext: Buffer): Buffer {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.master, iv);
    const body = Buffer.concat([c.update(plaintext), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]);
  }
  decrypt(blob: Buffer): Buffer {
    const d = createDecipheriv("aes-256-gcm", this.master, blob.subarray(0, 12));
    d.setAuthTag(blob.subarray(12, 28));
    return Buffer.concat([d.update(blob.subarray(28)), d.final()]);
  }
  /** KMS JSON protocol (TrentService.*): blobs travel base64-encoded. */
  handle(action: string, input: KmsRequest): unknown {
    const KeyId = "arn:aws:kms:local:000000000000:key/local";
    switch (action) {
      case "GenerateDataKey": {
        const bytes = input.NumberOfBytes ?? (input.KeySpec === "AES_128" ? 16 : 32);
        const plain = randomBytes(bytes);
        return {
          KeyId,
          Plaintext: plain.toString("base64"),
          CiphertextBlob: this.encrypt(plain).toString("base64"),
        };
      }
      case "Encrypt":
        return {
          KeyId,
          CiphertextBlob: this.encrypt(
            Buffer.from(required(input.Plaintext, "Plaintext"), "base64"),
          ).toString("base64"),
        };
      case "Decrypt":
        return {
          KeyId,
          Plaintext: this.decrypt(
            Buffer.from(required(input.CiphertextBlob, "CiphertextBlob"), "base64"),
          ).toString("base64"),
        };
      default:
        throw Object.assign(new Error(`KMS action ${action} is not emulated`), {
          code: "UnsupportedOperationException",
        });
    }
  }
}
