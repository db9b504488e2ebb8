import { type Authorization, Refused } from "./refusal.ts";

// A runtime's KMS call as IAM reads it: Decrypt only (it opens its sealed environment, nothing else), authorized
// as kms:Decrypt on the secrets key with each pair of the call's encryption context as kms:EncryptionContext:<key>.

/** The call's authorization and the body to forward (re-serialized: what was checked is what KMS reads). */
export function kmsAuthorization(
  target: unknown,
  body: string,
  keyArn: string,
): { authorization: Authorization; checked: string } {
  if (target !== "TrentService.Decrypt")
    throw new Refused("AccessDeniedException", "The local cloud's proxy serves KMS Decrypt only.", 403);
  let input: unknown;
  try {
    input = JSON.parse(body);
  } catch {
    throw new Refused("SerializationException", "The request body is not valid JSON.");
  }
  if (!input || typeof input !== "object" || Array.isArray(input))
    throw new Refused("SerializationException", "The request body is not a JSON object.");
  const given = (input as { EncryptionContext?: unknown }).EncryptionContext;
  if (given !== undefined && (given === null || typeof given !== "object" || Array.isArray(given)))
    throw new Refused("ValidationException", "EncryptionContext must be a map of strings.");
  const context: Record<string, string> = {};
  for (const [k, v] of Object.entries(given ?? {})) {
    if (typeof v !== "string")
      throw new Refused("ValidationException", "EncryptionContext must be a map of strings.");
    context[`kms:EncryptionContext:${k}`] = v;
  }
  return {
    authorization: { action: "kms:Decrypt", resource: keyArn, context },
    checked: JSON.stringify(input),
  };
}
