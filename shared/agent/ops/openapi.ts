import { type DocRoute, openApiDocument } from "../../http/openapi.ts";

// The agent server's own OpenAPI document: the manifest's "agent" routes with paths relative to one
// deployment (`/agents/{deployment_id}` becomes the server URL), as the reference server documents itself.
const AGENT_PREFIX = "/agents/{deployment_id}";

export function agentOpenApiDocument(version: string, deploymentId: string, list: DocRoute[]) {
  const agentRoutes = list
    .filter((r) => r.group === "agent" && r.path.startsWith(AGENT_PREFIX))
    .map((r) => ({ ...r, path: r.path.slice(AGENT_PREFIX.length) || "/" }));
  const doc = openApiDocument("Agent server", version, agentRoutes);
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops) as { parameters?: { name: string; in: string }[] }[])
      op.parameters = op.parameters?.filter((p) => !(p.in === "path" && p.name === "deployment_id"));
  return { ...doc, servers: [{ url: `/agents/${encodeURIComponent(deploymentId)}` }] };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained reference page (no CDN): it fetches the sibling openapi.json and lists every operation. */
export function docsPage(deploymentId: string): string {
  const title = `Agent server — ${escapeHtml(deploymentId)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem}details{border:1px solid #ddd;border-radius:6px;margin:.4rem 0;padding:.3rem .7rem}
summary{cursor:pointer}code{font:13px ui-monospace,monospace}.m{display:inline-block;width:4.5rem;font-weight:600}
.get{color:#1a7f37}.post{color:#0969da}.patch{color:#9a6700}.put{color:#8250df}.delete{color:#cf222e}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:12px}
</style></head>
<body><h1>${title}</h1><p>Base URL <code id="base"></code> · <a href="openapi.json">openapi.json</a> ·
requests need the header <code>X-Api-Key</code>.</p><div id="ops">Loading…</div>
<script>
const base = location.pathname.replace(/\\/docs\\/?$/, "");
document.getElementById("base").textContent = location.origin + base;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
fetch(base + "/openapi.json").then((r) => r.json()).then((doc) => {
  const html = [];
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    const parts = [];
    if (op.parameters && op.parameters.length) parts.push("<b>Parameters</b><pre>" + esc(JSON.stringify(op.parameters, null, 2)) + "</pre>");
    if (op.requestBody) parts.push("<b>Body</b><pre>" + esc(JSON.stringify(op.requestBody.content["application/json"].schema, null, 2)) + "</pre>");
    const ok = op.responses["200"] && op.responses["200"].content;
    if (ok) parts.push("<b>Response</b><pre>" + esc(JSON.stringify(ok["application/json"].schema, null, 2)) + "</pre>");
    const m = esc(method);
    html.push("<details><summary><span class='m " + m + "'>" + m.toUpperCase() + "</span><code>" + esc(path) +
      "</code> — " + esc(op.summary || "") + "</summary>" + (parts.join("") || "<p>No parameters.</p>") + "</details>");
  }
  document.getElementById("ops").innerHTML = html.join("");
}, (e) => { document.getElementById("ops").textContent = "Could not load openapi.json: " + e; });
</script></body></html>
`;
}
