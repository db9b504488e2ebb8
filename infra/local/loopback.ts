import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { RUNTIME_HOST_OPS } from "../../shared/agent/hosting/host.ts";
import type { RuntimeHost } from "../../shared/agent/hosting/runtime-host.ts";
import { LOOPBACK_PATHS, LOOPBACK_TOKEN_HEADER } from "../../shared/aws/local-loopback.ts";
import { jsonResult, write } from "./gateway.ts";
import { readBody } from "./http-util.ts";

// The local cloud's internal endpoints for its Lambda environments (shared/aws/local-loopback.ts): a worker running
// a function's bundle shares no module state with this process, so what AWS keeps in a service and this process
// keeps in memory (the runtimes) is asked for here, with the token of this start.

/** A fresh token per start: only the environments this process starts are told it. */
export const newLoopbackToken = () => randomBytes(24).toString("base64url");

const RuntimeHostCall = z.object({
  op: z.enum(RUNTIME_HOST_OPS),
  tenant_id: z.string().min(1).max(128),
  deployment_id: z.string().min(1).max(128),
  thread_id: z.string().min(1).max(128).optional(),
});

type Endpoint = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** A body's JSON checked against `schema`, or the 4xx already written. */
async function parsed<T>(req: IncomingMessage, res: ServerResponse, token: string, schema: z.ZodType<T>) {
  const given = Buffer.from(String(req.headers[LOOPBACK_TOKEN_HEADER] ?? ""));
  const want = Buffer.from(token);
  if (given.length !== want.length || !timingSafeEqual(given, want)) {
    req.resume();
    write(res, jsonResult(403, { detail: "Not an environment of this local cloud" }));
    return undefined;
  }
  let body: unknown;
  try {
    body = JSON.parse((await readBody(req, 64 * 1024)).toString("utf8"));
  } catch {
    write(
      res,
      jsonResult(422, { detail: [{ loc: ["body"], msg: "Body is not JSON", type: "value_error" }] }),
    );
    return undefined;
  }
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  write(
    res,
    jsonResult(422, {
      detail: r.error.issues.map((i) => ({ loc: ["body", ...i.path], msg: i.message, type: i.code })),
    }),
  );
  return undefined;
}

export function loopbackEndpoints(token: string, runtimes: RuntimeHost): Record<string, Endpoint> {
  return {
    [LOOPBACK_PATHS.runtimeHost]: async (req, res) => {
      const call = await parsed(req, res, token, RuntimeHostCall);
      if (!call) return;
      if (call.op === "kick") {
        if (!call.thread_id)
          return write(
            res,
            jsonResult(422, { detail: [{ loc: ["body", "thread_id"], msg: "Required", type: "missing" }] }),
          );
        await runtimes.kick(call.tenant_id, call.deployment_id, call.thread_id);
      } else await runtimes[call.op](call.tenant_id, call.deployment_id);
      write(res, jsonResult(200, {}));
    },
  };
}
