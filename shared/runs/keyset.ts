import { z } from "zod";
import { validationError } from "../errors.ts";

// The cursor of a list answered in memory (threads, a thread's traces): the sort time and id of the last item
// answered, opaque to the client. What comes back is decoded to this shape or refused with a 422.
const Keyset = z.object({ t: z.string().min(1).max(64), id: z.string().min(1).max(1024) }).strict();
export type Keyset = z.infer<typeof Keyset>;

export const encodeKeyset = (k: Keyset) => Buffer.from(JSON.stringify(k)).toString("base64url");

export function decodeKeyset(cursor: string | undefined, loc: "body" | "query"): Keyset | undefined {
  if (!cursor) return undefined;
  try {
    return Keyset.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw validationError([loc, "cursor"], "Invalid cursor");
  }
}
