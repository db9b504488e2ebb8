// Which manifest route a method and path name, as API Gateway picks one: the most literal path wins, `{name}`
// takes one segment, `{name+}` the rest. The local gateway and the AWS agent router (a deployment's own origin,
// where every path reaches it through one catch-all) match with this one table.

/** What matching reads of a manifest route (functions/routes.ts' MountedRoute). */
export interface MatchableRoute {
  method: string;
  mountPath: string;
}

export interface CompiledRoute<R extends MatchableRoute = MatchableRoute> {
  route: R;
  regex: RegExp;
  names: string[];
  staticScore: number;
}

function compilePath(path: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const pattern = path
    .split("/")
    .map((seg) => {
      const m = /^\{(\w+)(\+?)\}$/.exec(seg);
      if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(m[1]!);
      return m[2] ? "(.+)" : "([^/]+)";
    })
    .join("/");
  return { regex: new RegExp(`^${pattern}$`), names };
}

/** The routes compiled for matching, each item kept with what the caller attached to it, most literal first. */
export function compileRoutes<T extends { route: MatchableRoute }>(
  items: T[],
): (T & CompiledRoute<T["route"]>)[] {
  return items
    .map((item) => ({
      ...item,
      ...compilePath(item.route.mountPath),
      staticScore: item.route.mountPath.split("/").filter((s) => s && !s.startsWith("{")).length,
    }))
    .sort((a, b) => b.staticScore - a.staticScore);
}

/** The route for a method and path: a match with its path parameters, or the status that says why there is none. */
export function matchRoute<C extends CompiledRoute>(
  compiled: C[],
  method: string,
  path: string,
): { route: C; params: Record<string, string> } | 404 | 405 {
  let pathMatched = false;
  for (const c of compiled) {
    const m = c.regex.exec(path);
    if (!m) continue;
    pathMatched = true;
    // ANY serves every method but OPTIONS: a preflight stays the gateway's (405 → answered as CORS).
    if (c.route.method !== method && (c.route.method !== "ANY" || method === "OPTIONS")) continue;
    const params: Record<string, string> = {};
    c.names.forEach((n, i) => {
      params[n] = safeDecode(m[i + 1]!);
    });
    return { route: c, params };
  }
  return pathMatched ? 405 : 404;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
