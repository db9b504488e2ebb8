import { createHash, timingSafeEqual } from "node:crypto";

// Secrets the platform hands out and checks later (API keys, OAuth flow states, runtime tokens) are stored
// only as their SHA-256, and compared in constant time.

export const secretHash = (secret: string): string =>
  createHash("sha256").update(secret, "utf8").digest("hex");

/** Whether a secret matches a stored hash, in constant time. */
export function secretMatches(secret: string, storedHash: unknown): boolean {
  if (typeof storedHash !== "string") return false;
  const a = Buffer.from(secretHash(secret), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
