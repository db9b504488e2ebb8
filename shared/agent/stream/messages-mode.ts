import { toJson } from "./serialize.ts";

// stream_mode "messages" (as opposed to "messages-tuple"): the graph's [message chunk, metadata] pairs become
// `messages/metadata` (once per message id), `messages/partial` (the message accumulated so far) and
// `messages/complete` (the whole message: at once for a non-chunk message, else when the next message starts
// or the run's stream ends), each carrying a one-element list of message dicts, as the reference server sends.
export type ModeFrame = [event: string, data: unknown];

/** A LangChain message chunk (AIMessageChunk and the like): chunks of one message concatenate. */
interface ChunkLike {
  concat(other: ChunkLike): ChunkLike;
}
const isChunk = (m: unknown): m is ChunkLike => {
  const c = m as { concat?: unknown; constructor?: { name?: string } } | null | undefined;
  return typeof c?.concat === "function" && /Chunk$/.test(c?.constructor?.name ?? "");
};

export class MessagesMode {
  private readonly open = new Map<string, ChunkLike>();

  push(message: unknown, metadata: unknown): ModeFrame[] {
    const id: string = (message as { id?: string } | null | undefined)?.id ?? "";
    const out: ModeFrame[] = [];
    // A different message starting completes the ones before it.
    for (const [other, acc] of this.open)
      if (other !== id) {
        out.push(["messages/complete", [toJson(acc)]]);
        this.open.delete(other);
      }
    const prev = this.open.get(id);
    if (!prev) out.push(["messages/metadata", { [id]: { metadata: toJson(metadata) } }]);
    if (!isChunk(message)) {
      this.open.delete(id);
      out.push(["messages/complete", [toJson(message)]]);
      return out;
    }
    const acc = prev ? prev.concat(message) : message;
    this.open.set(id, acc);
    out.push(["messages/partial", [toJson(acc)]]);
    return out;
  }

  /** Completes every message still open (the run's stream ended). */
  end(): ModeFrame[] {
    const out: ModeFrame[] = [...this.open.values()].map((acc) => ["messages/complete", [toJson(acc)]]);
    this.open.clear();
    return out;
  }
}
