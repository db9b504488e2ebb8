import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand } from "@aws-sdk/client-kms";
import { kms } from "../aws/clients.ts";
import { config } from "../config.ts";

// KMS envelope encryption: a fresh data key per secret, the key stored only wrapped by KMS (the secrets key).
// The encryption context binds a ciphertext to its owner (its workspace, tenant_id, + record), so it cannot be
// moved; IAM grants on the secrets key require the workspace in it.
export interface Sealed {
  v: 1;
  key: string;
  iv: string;
  tag: string;
  data: string;
}

/** A secret's encryption context: its workspace, and what else names its record. */
export type SealContext = { tenant_id: string } & Record<string, string>;

export async function seal(plaintext: string, context: SealContext): Promise<Sealed> {
  const dk = await kms().send(
    new GenerateDataKeyCommand({
      KeyId: config.secretsKeyId,
      KeySpec: "AES_256",
      EncryptionContext: context,
    }),
  );
  const key = Buffer.from(dk.Plaintext!);
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(JSON.stringify(context)));
  const data = Buffer.concat([c.update(plaintext, "utf8"), c.final()]);
  key.fill(0);
  return {
    v: 1,
    key: Buffer.from(dk.CiphertextBlob!).toString("base64"),
    iv: iv.toString("base64"),
    tag: c.getAuthTag().toString("base64"),
    data: data.toString("base64"),
  };
}

export async function unseal(sealed: Sealed, context: SealContext): Promise<string> {
  const dk = await kms().send(
    new DecryptCommand({ CiphertextBlob: Buffer.from(sealed.key, "base64"), EncryptionContext: context }),
  );
  const key = Buffer.from(dk.Plaintext!);
  const d = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
  d.setAAD(Buffer.from(JSON.stringify(context)));
  d.setAuthTag(Buffer.from(sealed.tag, "base64"));
  const out = Buffer.concat([d.update(Buffer.from(sealed.data, "base64")), d.final()]).toString("utf8");
  key.fill(0);
  return out;
}

/** Seals each value of a record of secrets; the names stay readable, the values do not. */
export async function sealRecord(values: Record<string, string>, context: SealContext) {
  return seal(JSON.stringify(values), context);
}
export async function unsealRecord(sealed: Sealed, context: SealContext): Promise<Record<string, string>> {
  return JSON.parse(await unseal(sealed, context));
}
