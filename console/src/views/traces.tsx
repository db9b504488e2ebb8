import { Projects } from "./traces/projects.tsx";
import { ProjectRuns } from "./traces/runs.tsx";
import { ProjectThreads, ThreadView } from "./traces/threads.tsx";
import { TraceView } from "./traces/trace.tsx";

// Traces: `#/traces` (projects and their charts), `#/traces/<project>` (its runs),
// `#/traces/<project>/trace/<trace>[/<run>]` (a trace's tree and timeline, one run opened), `#/traces/<project>/threads`
// (its conversation threads) and `#/traces/<project>/thread/<thread>` (a thread's traces in turn order).
export function Traces({ route }: { route: string[] }) {
  const [project, what, trace, run] = route;
  if (project && what === "trace" && trace)
    return <TraceView key={trace} projectId={project} traceId={trace} runId={run} />;
  if (project && what === "thread" && trace)
    return <ThreadView key={trace} projectId={project} threadId={trace} />;
  if (project && what === "threads") return <ProjectThreads key={project} projectId={project} />;
  if (project) return <ProjectRuns key={project} projectId={project} />;
  return <Projects />;
}
