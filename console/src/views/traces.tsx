import { Projects } from "./traces/projects.tsx";
import { ProjectRuns } from "./traces/runs.tsx";
import { TraceView } from "./traces/trace.tsx";

// Traces: `#/traces` (projects and their charts), `#/traces/<project>` (its runs),
// `#/traces/<project>/trace/<trace>[/<run>]` (a trace's tree and timeline, one run opened).
export function Traces({ route }: { route: string[] }) {
  const [project, what, trace, run] = route;
  if (project && what === "trace" && trace)
    return <TraceView key={trace} projectId={project} traceId={trace} runId={run} />;
  if (project) return <ProjectRuns key={project} projectId={project} />;
  return <Projects />;
}
