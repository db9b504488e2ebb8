import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The local key service: one master key in DATA_DIR wraps data keys with AES-256-GCM, as KMS would. As KMS, it
// binds each ciphertext to its encryption context (the GCM AAD): a Decrypt with another context fails.

/** A KMS JSON request's body: the members of the actions emulated (each reads its own; blobs in base64). */
export interface KmsRequest {
  NumberOfBytes?: number;
  KeySpec?: string;
  Plaintext?: string;
  CiphertextBlob?: string;
  EncryptionContext?: Record<string, string>;
}
const validation = (message: string) => Object.assign(new Error(message), { code: "ValidationException" });
function required(value: string | undefined, member: string): string {
  if (value === undefined) throw validation(`${member} is required`);
  return value;
}
/** A blob member decoded, within KMS's limit for it (Plaintext 4096 bytes, CiphertextBlob 6144, as KMS's API says). */
function blob(value: string | undefined, member: string, max: number): Buffer {
  const bytes = Buffer.from(required(value, member), "base64");
  if (bytes.length < 1 || bytes.length > max)
    throw validation(`1 validation error detected: ${member} must be 1 to ${max} bytes long`);
  return bytes;
}
/**
 * Blobs that carry their context in the AAD start with this. Older ones (no context: an existing DATA_DIR's) are
 * read for the platform's own callers only, never for a deployment's runtime: a runtime could otherwise open a
 * pre-context blob of another deployment under its own context, the only one its policy lets it name. (No runtime
 * blob predates contexts: runtimes' sealed environments came after them.)
 */
const CONTEXT_BOUND = Buffer.from("LK2");
/** An encryption context as KMS compares it: the same pairs in any order. */
const contextAad = (context: Record<string, string> = {}) =>
  Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
const invalid = () =>
  Object.assign(new Error("The ciphertext or its encryption context is not valid"), {
    code: "InvalidCiphertextException",
  });

export class LocalKms {
  private readonly master: Buffer;
  constructor(dataDir: string) {
    const file = join(dataDir, "kms-master.key");
    if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600 });
    this.master = readFileSync(file);
  }
  encrypt(plaintext: Buffer, context?: Record<string, string>): Buffer {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.master, iv);
    c.setAAD(contextAad(context));
    const body = Buffer.concat([c.update(plaintext), c.final()]);
    return Buffer.concat([CONTEXT_BOUND, iv, c.getAuthTag(), body]);
  }
  decrypt(blob: Buffer, context?: Record<string, string>, readsPreContext = false): Buffer {
    if (blob.subarray(0, CONTEXT_BOUND.length).equals(CONTEXT_BOUND))
      try {
        return this.open(blob.subarray(CONTEXT_BOUND.length), contextAad(context));
      } catch {
        // A blob of before contexts whose IV happens to start with the marker: read as such below.
      }
    if (!readsPreContext) throw invalid();
    try {
      return this.open(blob);
    } catch {
      throw invalid();
    }
  }
  private open(blob: Buffer, aad?: Buffer): Buffer {
    const d = createDecipheriv("aes-256-gcm", this.master, blob.subarray(0, 12));
    if (aad) d.setAAD(aad);
    d.setAuthTag(blob.subarray(12, 28));
    return Buffer.concat([d.update(blob.subarray(28)), d.final()]);
  }
  /**
   * KMS JSON protocol (TrentService.*): blobs travel base64-encoded. `platformCaller`: the call is the platform's
   * own (a platform role or the operator), which alone may read a blob of before contexts.
   */
  handle(action: string, input: KmsRequest, platformCaller = false): unknown {
    const KeyId = "arn:aws:kms:local:000000000000:key/local";
    switch (action) {
      case "GenerateDataKey": {
        const bytes = input.NumberOfBytes ?? (input.KeySpec === "AES_128" ? 16 : 32);
        if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024)
          throw validation("1 validation error detected: NumberOfBytes must be 1 to 1024");
        const plain = randomBytes(bytes);
        return {
          KeyId,
          Plaintext: plain.toString("base64"),
          CiphertextBlob: this.encrypt(plain, input.EncryptionContext).toString("base64"),
        };
      }
      case "Encrypt":
        return {
          KeyId,
          CiphertextBlob: this.encrypt(
            blob(input.Plaintext, "Plaintext", 4096),
            input.EncryptionContext,
          ).toString("base64"),
        };
      case "Decrypt":
        return {
          KeyId,
          Plaintext: this.decrypt(
            blob(input.CiphertextBlob, "CiphertextBlob", 6144),
            input.EncryptionContext,
            platformCaller,
          ).toString("base64"),
        };
      default:
        throw Object.assign(new Error(`KMS action ${action} is not emulated`), {
          code: "UnsupportedOperationException",
        });
    }
  }
}
