import { UpstreamError } from "../errors.ts";
import { logger } from "../log.ts";
import { outboundRequest } from "../outbound/request.ts";
import type { RunRecord } from "../records/agent.ts";
import { isoNow } from "../time.ts";
import type { RunOutcome } from "./broker.ts";
import type { AgentDeployment } from "./context.ts";
import { ACTIVE, getRunItem, toRun } from "./runs.ts";
import { httpFlag } from "./runtime/artifact.ts";
import { threadState } from "./state.ts";

// Run webhooks: when a run created with `webhook` finishes (success, error, interrupted) the URL gets a POST of
// the run as GET run shows it, plus `values` (its final values, else the thread's state when readable), `error`
// (the message, when it failed) and `webhook_sent_at`. A rolled-back or deleted run sends nothing. The URL is the
// caller's: the SSRF-guarded outbound client, a timeout, retries on network errors, 429 and 5xx; a delivery that
// still fails is logged with the host only and never changes the run. With langgraph.json
// `http.disable_webhooks` nothing is sent.
/**
 * How a finished run's webhook goes out: straight from this process (AWS: the runtime function), or — in a
 * sandboxed runtime, which reaches only public addresses — handed to the platform with the run's ids, which
 * takes the URL from the run's record and delivers it by its own rules (runtime-socket.ts).
 */
export type WebhookSender = (
  run: { thread_id: string; run_id: string; url: string },
  body: string,
) => Promise<string | undefined>;
let sender: WebhookSender = (run, body) => deliverWebhook(run.url, body);
export function setWebhookSender(s: WebhookSender): void {
  sender = s;
}

const ATTEMPTS = 3;
const TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 500;

export async function notifyWebhook(d: AgentDeployment, run: RunRecord, outcome: RunOutcome): Promise<void> {
  const url = run.kwargs?.webhook;
  if (typeof url !== "string" || !url || outcome.status === "deleted") return;
  // langgraph.json http.disable_webhooks: the run is kept as asked, no webhook is called.
  if (await httpFlag("disable_webhooks")) return;
  const item = await getRunItem(d, run.thread_id, run.run_id);
  if (!item || ACTIVE.includes(item.status)) return;
  const values =
    item.status === "success" && outcome.values !== undefined
      ? outcome.values
      : await threadState(d, run.thread_id).then(
          (s) => s.values,
          () => null,
        );
  const body = JSON.stringify({
    ...toRun(item),
    values,
    ...(outcome.error ? { error: outcome.error.message } : {}),
    webhook_sent_at: isoNow(),
  });
  const failure = await sender({ thread_id: run.thread_id, run_id: run.run_id, url }, body);
  if (failure)
    logger.warn("run webhook failed", {
      run_id: run.run_id,
      webhook_host: new URL(url).host,
      error: failure,
    });
}

/** POSTs the body, retrying with backoff; answers why it failed, or undefined once delivered. */
export async function deliverWebhook(url: string, body: string): Promise<string | undefined> {
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
      failure = `answered HTTP ${res.status}`;
      if (res.status < 500 && res.status !== 429) return failure;
    } catch (err) {
      failure = err instanceof UpstreamError ? err.message : "request failed";
    }
  }
  return failure;
}
