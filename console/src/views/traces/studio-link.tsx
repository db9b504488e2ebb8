import { useApi } from "../../hooks.ts";
import { href } from "../../router.ts";
import type { Deployment, Page, Run } from "../../wire.ts";

// A trace of a deployment's agent run links back to its thread in the studio: the run's metadata names the
// thread and assistant; the deployment is the one whose tracing project holds the trace.

export function StudioLink({ projectId, root }: { projectId: string; root: Run | undefined }) {
  const meta = root?.extra?.metadata ?? {};
  const threadId = typeof meta.thread_id === "string" ? meta.thread_id : undefined;
  const assistantId = typeof meta.assistant_id === "string" ? meta.assistant_id : undefined;
  const { data } = useApi<Page<Deployment>>(
    threadId && assistantId ? "/v2/deployments?limit=100" : undefined,
  );
  const deployment = data?.resources.find((d) => d.tracing_project_id === projectId);
  if (!deployment || !threadId || !assistantId) return null;
  return (
    <p>
      <a href={href("studio", deployment.id, assistantId, threadId)}>Open this thread in the studio</a>
    </p>
  );
}
