// dotted_order = for each ancestor from the root, `<UTC %Y%m%dT%H%M%S%fZ><run_id>`, joined by '.'.
const SEGMENT = /^(\d{8}T\d{6}\d{0,6}Z)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

export interface Lineage {
  trace_id: string;
  parent_run_id: string | null;
  parent_run_ids: string[];
  is_root: boolean;
}

function parseDottedOrder(dotted: string): { time: string; id: string }[] | undefined {
  const out: { time: string; id: string }[] = [];
  for (const seg of dotted.split(".")) {
    const m = SEGMENT.exec(seg);
    if (!m) return undefined;
    out.push({ time: m[1], id: m[2].toLowerCase() });
  }
  return out;
}

/** Ancestry from dotted_order when present and consistent with the run id; else from the explicit fields. */
export function lineageOf(run: {
  id: string;
  dotted_order?: string | null;
  trace_id?: string | null;
  parent_run_id?: string | null;
}): Lineage {
  const segs = run.dotted_order ? parseDottedOrder(run.dotted_order) : undefined;
  if (segs?.length && segs[segs.length - 1].id === run.id.toLowerCase()) {
    const ancestors = segs.slice(0, -1).map((s) => s.id);
    return {
      trace_id: run.trace_id ?? segs[0].id,
      parent_run_id: run.parent_run_id ?? ancestors[ancestors.length - 1] ?? null,
      parent_run_ids: ancestors,
      is_root: ancestors.length === 0,
    };
  }
  const parent = run.parent_run_id ?? null;
  return {
    trace_id: run.trace_id ?? (parent ? parent : run.id),
    parent_run_id: parent,
    parent_run_ids: parent ? [parent] : [],
    is_root: !parent,
  };
}
