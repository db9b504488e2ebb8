import { InvokeWithResponseStreamCommand } from "@aws-sdk/client-lambda";
import { describe, expect, it } from "vitest";
import { emulatorLambda } from "../../test/helpers/signed-emulator.ts";
import type { EmulatedServices } from "./aws-emulator.ts";

// Issue 26 (1): the local emulator answers InvokeWithResponseStream as Lambda does, read here by the AWS SDK's own
// client: each chunk the function writes is a PayloadChunk, the end an InvokeComplete (with the error of a
// function that failed mid-stream), an unknown function the SDK's ResourceNotFoundException; a caller that
// leaves aborts the function's side.
const seen: { name: string; qualifier?: string; payload: unknown }[] = [];
let aborted: Promise<void> | undefined;

const streaming: EmulatedServices["streaming"] = (name, qualifier, payload, signal) => {
  seen.push({ name, qualifier, payload });
  if (name === "ok")
    return (async function* () {
      yield Buffer.from('{"statusCode":200,"headers":{}}\n');
      yield Buffer.from("hello ");
      yield Buffer.from("world");
    })();
  if (name === "fails")
    return (async function* () {
      yield Buffer.from("partial");
      throw new Error("the runtime crashed");
    })();
  if (name === "endless") {
    aborted = new Promise((done) => signal.addEventListener("abort", () => done()));
    return (async function* () {
      while (!signal.aborted) {
        yield Buffer.from("tick");
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
  }
  return undefined;
};

const lambda = emulatorLambda({ streaming });

async function read(name: string, qualifier?: string) {
  const out = await lambda().send(
    new InvokeWithResponseStreamCommand({
      FunctionName: name,
      Qualifier: qualifier,
      Payload: Buffer.from(JSON.stringify({ kind: "http", n: 1 })),
    }),
  );
  const chunks: string[] = [];
  const completes: unknown[] = [];
  for await (const part of out.EventStream ?? []) {
    if (part.PayloadChunk?.Payload) chunks.push(Buffer.from(part.PayloadChunk.Payload).toString());
    if (part.InvokeComplete) completes.push(part.InvokeComplete);
  }
  return { status: out.StatusCode, version: out.ExecutedVersion, chunks, completes };
}

describe("InvokeWithResponseStream on the local emulator", () => {
  it("streams each chunk as a PayloadChunk, then one InvokeComplete without an error", async () => {
    const out = await read("ok", "rev-1");
    expect(out.chunks).toEqual(['{"statusCode":200,"headers":{}}\n', "hello ", "world"]);
    expect(out.completes).toHaveLength(1);
    expect(out.completes[0]).not.toHaveProperty("ErrorCode");
    expect(out.version).toBe("rev-1");
    expect(seen.at(-1)).toEqual({ name: "ok", qualifier: "rev-1", payload: { kind: "http", n: 1 } });
  });

  it("a function that fails mid-stream ends with InvokeComplete's ErrorCode and details", async () => {
    const out = await read("fails");
    expect(out.chunks).toEqual(["partial"]);
    expect(out.completes).toEqual([{ ErrorCode: "Unhandled", ErrorDetails: "the runtime crashed" }]);
  });

  it("an unknown function is the SDK's ResourceNotFoundException (404)", async () => {
    const err = await read("nope").catch((e) => e);
    expect(err.name).toBe("ResourceNotFoundException");
    expect(err.$metadata.httpStatusCode).toBe(404);
  });

  it("a caller that stops reading aborts the function's side", async () => {
    const controller = new AbortController();
    const out = await lambda().send(
      new InvokeWithResponseStreamCommand({ FunctionName: "endless", Payload: Buffer.from("{}") }),
      { abortSignal: controller.signal },
    );
    for await (const part of out.EventStream ?? []) {
      expect(Buffer.from(part.PayloadChunk?.Payload ?? []).toString()).toBe("tick");
      controller.abort();
      break;
    }
    await expect(aborted).resolves.toBeUndefined();
  });
});
