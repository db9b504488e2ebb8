import { config } from "../config.ts";
import { TooManyRequests } from "../errors.ts";
import { addRequests } from "../records/identity.ts";
import { BURST_SECONDS, rateWindow } from "./rate-limit.ts";
import { type RateWindow, WindowCounter } from "./window-counter.ts";

// Requests to a custom-auth deployment that carry no platform key (issue 33): an app's end users, or anyone on
// the internet. They never count in the owner's workspace bucket — a flood of them would otherwise answer the
// operator's own /v2 calls 429 — but in buckets of their own, shared by every process as the workspace's are:
// one per client address (the source IP API Gateway or the local gateway saw, never a header the client sets),
// checked first, so one client cannot use up its deployment's; and one per deployment, so many clients cannot
// take more than the deployment's share of the platform. Each is a fixed window of BURST_SECONDS' worth.

/** The shared record's key of a bucket (RATE#<key>, beside the workspaces' RATE#<tenant>; ids hold no `#`). */
const deploymentKey = (deploymentId: string) => `ENDUSERS#${deploymentId}`;
const clientKey = (deploymentId: string, client: string) => `ENDUSERS#${deploymentId}#${client}`;

const windowOf = (perSecond: number): RateWindow | undefined =>
  rateWindow({ perSecond, burst: perSecond * BURST_SECONDS });

/** Counts end users' requests in windows shared by every process (made once per process, as the router's). */
export class EndUserLimiter {
  constructor(private readonly counter = new WindowCounter(addRequests)) {}

  /** Admits a keyless request to the deployment from `client`, or throws TooManyRequests (429, Retry-After). */
  async admit(deploymentId: string, client: string): Promise<void> {
    const buckets: [string, RateWindow | undefined, string][] = [
      [clientKey(deploymentId, client || "unknown"), windowOf(config.endUserRate.perClient), "this client"],
      [deploymentKey(deploymentId), windowOf(config.endUserRate.perDeployment), "the deployment's users"],
    ];
    for (const [key, window, of] of buckets) {
      if (!window) continue;
      const decision = await this.counter.admit(key, window);
      if (!decision.admitted) throw new TooManyRequests(decision.retryAfterSeconds, of);
    }
  }
}
