// How platform code reaches deployments' runtimes without importing their code: a Lambda function per deployment
// (lambda-host.ts), in AWS and on the local cloud alike (whose Lambda service runs it: infra/local/runtimes.ts).
export interface RuntimeHost {
  /** Has the deployment's runtime start the thread's next due run (the run sweeper's retries, delayed runs). */
  kick(tenantId: string, deploymentId: string, threadId: string): Promise<void>;
  /** A new revision went live: its runtime takes over from the previous one. */
  activated(tenantId: string, deploymentId: string): Promise<void>;
  /** The deployment is deleted: its runtimes stop and go. */
  remove(tenantId: string, deploymentId: string): Promise<void>;
}
