import { randomBytes } from "node:crypto";

// The token of the local cloud's current start, which its Lambda environments are told (PLATFORM_LOOPBACK_TOKEN).

/** A fresh token per start: only the environments this process starts are told it. */
export const newLoopbackToken = () => randomBytes(24).toString("base64url");
