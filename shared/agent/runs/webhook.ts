import { type FailureClass, OutboundFailure, outboundRequest } from "../../containment/request.ts";
import { logger } from "../../log.ts";
import type { RunRecord } from "../../records/agent.ts";
import { isoNow } from "../../time.ts";
import { httpFlag } from "../artifact/artifact.ts";
import type { AgentDeployment, WebhookOutcome, WebhookSender } from "../deployment/deployment.ts";
import type { RunOutcome } from "../stream/broker.ts";
import { threadState } from "../threads/state.ts";
import { ACTIVE, getRunItem, toRun } from "./runs.ts";

// Run webhooks: when a run created with `webhook` finishes (success, error, interrupted) the URL gets a POST of
// the run as GET run shows it, plus `values` (its final values, else the thread's state when readable), `error`
// (the message, when it failed) and `webhook_sent_at`. A rolled-back or deleted run sends nothing. With
// langgraph.json `http.disable_webhooks` nothing is sent.
// The URL is whoever created the run's, so it goes out under the address policy of deployments' own egress
// (shared/containment/request.ts: no loopback, private, link-local or metadata address unless EGRESS_ALLOW lists
// the host, checked after DNS, redirects not followed), with a timeout and retries on network errors, 429 and
// 5xx. The URL and the run come from the run's record, the body is built here (`sendRunWebhook`), in AWS by the
// runtime function and on the local cloud by the platform for its sandboxed runtime; a delivery that still fails
// is logged with the host and the class of failure only, and never changes the run.

// The class only: what the target answered, or how its connection failed, stays out of logs and answers.
const FAILURES: Record<FailureClass, string> = {
  refused: "refused address",
  timeout: "timeout",
  "too-large": "answer too large",
  unreachable: "unreachable",
};
const ATTEMPTS = 3;
const TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 500;

export async function notifyWebhook(d: AgentDeployment, run: RunRecord, outcome: RunOutcome): Promise<void> {
  const url = run.kwargs?.webhook;
  if (typeof url !== "string" || !url || outcome.status === "deleted") return;
  // langgraph.json http.disable_webhooks: the run is kept as asked, no webhook is called.
  if (await httpFlag(d.runtime?.artifact, "disable_webhooks")) return;
  const item = await getRunItem(d, run.thread_id, run.run_id);
  if (!item || ACTIVE.includes(item.status)) return;
  const values =
    item.status === "success" && outcome.values !== undefined
      ? outcome.values
      : await threadState(d, run.thread_id).then(
          (s) => s.values,
          () => null,
        );
  const send: WebhookSender = d.runtime?.webhooks ?? sendRunWebhook;
  const failure = await send(item, { values, ...(outcome.error ? { error: outcome.error.message } : {}) });
  if (failure)
    logger.warn("run webhook failed", { run_id: run.run_id, webhook_host: hostOf(url), error: failure });
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
};

/**
 * Sends a finished run's webhook to the URL its record holds, the body built from the record (the run as GET run
 * shows it) and the outcome: never a URL or body anyone hands in. Answers the failure's class, or undefined.
 */
export async function sendRunWebhook(run: RunRecord, outcome: WebhookOutcome): Promise<string | undefined> {
  const url = run.kwargs?.webhook;
  if (typeof url !== "string" || !url || ACTIVE.includes(run.status)) return "no webhook to send";
  const body = JSON.stringify({
    ...toRun(run),
    values: outcome.values ?? null,
    ...(outcome.error ? { error: outcome.error } : {}),
    webhook_sent_at: isoNow(),
  });
  return deliverWebhook(url, body);
}

/** POSTs the body, retrying with backoff; answers the class of failure, or undefined once delivered. */
async function deliverWebhook(url: string, body: string): Promise<string | undefined> {
  let failure: string | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, FIRST_RETRY_MS * 2 ** (attempt - 1)));
    try {
      const res = await outboundRequest(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        timeoutMs: TIMEOUT_MS,
        maxBytes: 64 * 1024,
      });
      if (res.status >= 200 && res.status < 300) return undefined;
      failure = `status ${res.status}`;
      if (res.status < 500 && res.status !== 429) return failure;
    } catch (err) {
      // A URL that is no http(s) URL (the record holds one checked at creation) is refused as any address is.
      const kind: FailureClass = err instanceof OutboundFailure ? err.kind : "refused";
      failure = FAILURES[kind];
      if (kind === "refused") return failure;
    }
  }
  return failure;
}
