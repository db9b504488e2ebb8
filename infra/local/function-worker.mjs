// One Lambda execution environment of the local cloud, in a worker thread: it loads a function's bundle as the
// Node.js Lambda runtime does (the `awslambda` response-streaming globals included) and runs one invocation at
// a time for the host (infra/local/function-host.ts). Plain JavaScript: it runs bundles, never TypeScript.
import { parentPort, workerData } from "node:worker_threads";

const STREAMING = Symbol.for("aws.lambda.runtime.handler.streaming");
const PRELUDE_END = new Uint8Array(8);

/** The response stream Lambda hands a streamified handler: bytes go to the host as they are written. */
class ResponseStream {
  #closeHandlers = [];
  #ended = false;
  constructor(id) {
    this.id = id;
  }
  write(chunk) {
    if (this.#ended) return false;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
    parentPort.postMessage({ id: this.id, type: "chunk", bytes });
    return true;
  }
  end(chunk) {
    if (this.#ended) return;
    if (chunk !== undefined) this.write(chunk);
    this.#ended = true;
    parentPort.postMessage({ id: this.id, type: "end" });
  }
  on(event, fn) {
    if (event === "close") this.#closeHandlers.push(fn);
    return this;
  }
  once(event, fn) {
    return this.on(event, fn);
  }
  setContentType() {}
  close() {
    for (const fn of this.#closeHandlers.splice(0)) fn();
  }
}

globalThis.awslambda = {
  streamifyResponse(fn) {
    fn[STREAMING] = "response";
    return fn;
  },
  HttpResponseStream: {
    // As the Lambda runtime does: the metadata as JSON, then eight zero bytes, then the body.
    from(stream, prelude) {
      stream.write(Buffer.from(JSON.stringify(prelude)));
      stream.write(PRELUDE_END);
      return stream;
    },
  },
};

const mod = await import(workerData.entry);
const handler = mod[workerData.handler ?? "handler"];
if (typeof handler !== "function") throw new Error(`${workerData.entry} exports no ${workerData.handler}`);

// The bundle's request counts (shared/aws/request-stats.ts, PLATFORM_COUNT_REQUESTS), for the local cloud's total.
const STATS = Symbol.for("agent-platform.request-stats");
const statsOf = () => globalThis[STATS];

let current;
parentPort.on("message", async (msg) => {
  if (msg.type === "abort") return current?.close();
  const { id, event, deadline, requestId, traceId } = msg;
  // As Lambda's runtime does: the SDK sends it on the function's calls (an Invoke it makes reads as nested).
  process.env._X_AMZN_TRACE_ID = traceId;
  const context = {
    functionName: workerData.functionName,
    functionVersion: "$LATEST",
    memoryLimitInMB: String(workerData.memoryMb),
    awsRequestId: requestId,
    invokedFunctionArn: workerData.functionArn,
    logGroupName: `/aws/lambda/${workerData.functionName}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    callbackWaitsForEmptyEventLoop: false,
  };
  try {
    if (handler[STREAMING] === "response") {
      current = new ResponseStream(id);
      const stream = current;
      await handler(event, stream, context);
      stream.end();
      parentPort.postMessage({ id, type: "done", streamed: true, stats: statsOf() });
    } else {
      const result = await handler(event, context);
      // Lambda hands a result back as JSON: what does not survive that does not reach the caller either.
      parentPort.postMessage({
        id,
        type: "done",
        json: JSON.stringify(result === undefined ? null : result),
        stats: statsOf(),
      });
    }
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    parentPort.postMessage({
      id,
      type: "error",
      errorType: e.name,
      errorMessage: e.message,
      stats: statsOf(),
    });
  } finally {
    current = undefined;
    // Work of its own between invocations (a schedule's local timer) is no invocation's.
    delete process.env._X_AMZN_TRACE_ID;
  }
});
parentPort.postMessage({ type: "ready" });
