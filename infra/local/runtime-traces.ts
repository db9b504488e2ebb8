import type { IncomingMessage, ServerResponse } from "node:http";
import { acceptRuntimeTraces, type RuntimeTraceBatch } from "../../shared/agent/tracing/sink.ts";
import { config } from "../../shared/config.ts";
import { HttpError } from "../../shared/errors.ts";
import { jsonResult, write } from "./gateway.ts";
import { BodyTooLarge, readBody } from "./http-util.ts";

// The local transport of the trace sink (shared/agent/tracing/sink.ts): POST /__platform/runtime-traces on a
// runtime's own socket (runtime-socket.ts), so the socket says which deployment calls; the answer is the sink's,
// as the AgentTraceIngest task answers a runtime in AWS.

/** The handler of one runtime's trace posts: its deployment's workspace and tracing project (null: untraced). */
export function localTraceTransport(deployment: { tenant_id: string; tracing_project_id: string | null }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let batch: unknown;
    try {
      batch = JSON.parse((await readBody(req, config.agent.traceBodyBytes)).toString("utf8"));
    } catch (err) {
      if (err instanceof BodyTooLarge)
        return write(
          res,
          jsonResult(413, { detail: `The body is larger than ${config.agent.traceBodyBytes} bytes` }),
        );
    }
    if (batch === null || typeof batch !== "object" || Array.isArray(batch))
      return write(
        res,
        jsonResult(422, { detail: [{ loc: ["body"], msg: "Not a JSON object", type: "json_invalid" }] }),
      );
    try {
      const result = await acceptRuntimeTraces(
        deployment.tenant_id,
        deployment.tracing_project_id,
        batch as RuntimeTraceBatch,
      );
      return write(res, jsonResult(200, result));
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return write(res, jsonResult(err.status, err.body()));
    }
  };
}
