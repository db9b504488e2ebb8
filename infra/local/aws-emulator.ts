import { createServer, type Server } from "node:http";
import { logger } from "../../shared/log.ts";
import { listen, readBody } from "./http-util.ts";
import type { LocalKms } from "./kms.ts";
import type { LocalLambda } from "./lambda.ts";
import { type StreamingFunction, writeResponseStream } from "./lambda-stream.ts";
import type { LocalScheduler } from "./scheduler.ts";
import { awsError, errorFields, type LocalStepFunctions } from "./sfn.ts";

// One loopback endpoint that speaks the wire protocols of KMS, Step Functions, Lambda and EventBridge
// Scheduler, so handlers use the real AWS SDK clients unchanged (AWS_ENDPOINT_URL_<SERVICE>). Lambda: Invoke
// (sync and Event) of the platform's tasks, and InvokeWithResponseStream of deployments' runtimes.
export interface EmulatedServices {
  kms: LocalKms;
  sfn: LocalStepFunctions;
  lambda: LocalLambda;
  scheduler: LocalScheduler;
  /** Functions that answer InvokeWithResponseStream (deployments' runtimes). */
  streaming?: StreamingFunction;
}

function send(
  res: import("node:http").ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/x-amz-json-1.1", ...headers });
  // AWS JSON protocols carry timestamps as epoch seconds.
  res.end(
    body === undefined
      ? ""
      : JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
          const raw = this[key]; // before toJSON: a Date is still a Date here
          return raw instanceof Date ? raw.getTime() / 1000 : value;
        }),
  );
}

export async function startAwsEmulator(
  services: EmulatedServices,
  host: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const input = raw.length ? JSON.parse(raw.toString("utf8")) : {};
      const target = String(req.headers["x-amz-target"] ?? "");
      const url = new URL(req.url ?? "/", "http://local");
      if (target.startsWith("TrentService."))
        return send(res, 200, services.kms.handle(target.slice(13), input));
      if (target.startsWith("AWSStepFunctions."))
        return send(res, 200, services.sfn.handle(target.slice(17), input));
      const fn = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
      if (fn && req.method === "POST") {
        const async = req.headers["x-amz-invocation-type"] === "Event";
        const out = await services.lambda.invoke(decodeURIComponent(fn[1]), input, async);
        return send(res, out.status, out.body, out.error ? { "x-amz-function-error": out.error } : {});
      }
      const streamed = /^\/2021-11-15\/functions\/([^/]+)\/response-streaming-invocations$/.exec(
        url.pathname,
      );
      if (streamed && req.method === "POST") {
        const name = decodeURIComponent(streamed[1]);
        const qualifier = url.searchParams.get("Qualifier") ?? undefined;
        const abort = new AbortController();
        const bytes = services.streaming?.(name, qualifier, input, abort.signal);
        if (!bytes) throw awsError("ResourceNotFoundException", `Function not found: ${name}`, 404);
        return await writeResponseStream(res, bytes, qualifier ?? "$LATEST", abort);
      }
      const sched = /^\/schedules\/([^/]+)$/.exec(url.pathname);
      if (sched) {
        const name = decodeURIComponent(sched[1]);
        const group = url.searchParams.get("groupName") ?? undefined;
        if (req.method === "POST") return send(res, 200, await services.scheduler.create(name, input));
        if (req.method === "PUT") return send(res, 200, await services.scheduler.create(name, input, true));
        if (req.method === "GET") return send(res, 200, await services.scheduler.get(name, group));
        if (req.method === "DELETE") return send(res, 200, await services.scheduler.delete(name, group));
      }
      send(res, 400, {
        __type: "UnknownOperationException",
        message: `Not emulated: ${req.method} ${url.pathname} ${target}`,
      });
    } catch (err) {
      const e = errorFields(err);
      if (!e.code) logger.error("aws emulator error", { error: err });
      const code = String(e.code ?? "InternalFailure");
      send(
        res,
        typeof e.status === "number" ? e.status : 500,
        { __type: code, message: String(e.message ?? err) },
        { "x-amzn-errortype": code },
      );
    }
  });
  const port = await listen(server, 0, host);
  return { server, url: `http://${host}:${port}` };
}
