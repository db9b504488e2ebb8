import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The web console's static files (console/dist, built by infra/console/build.mjs) served by the local gateway
// at `/`: index.html, app.js, app.css. In AWS, CloudFront serves them from S3. Only flat file names are served
// (no path reaches outside the folder).
const DIST = join(resolve(dirname(fileURLToPath(import.meta.url)), "../.."), "console", "dist");
const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  png: "image/png",
  svg: "image/svg+xml",
};

/**
 * The console's Content-Security-Policy: its own scripts and styles only; images and media only its own, inline
 * (data:, an LLM message's base64) and a run's attachments from `attachmentsOrigin` (where S3 presigns them). An
 * LLM message's remote URL is shown as a link, never fetched (a trace could track whoever opens it).
 */
export const consoleCsp = (attachmentsOrigin?: string) => {
  const from = ["'self'", "data:", ...(attachmentsOrigin ? [attachmentsOrigin] : [])].join(" ");
  return (
    `default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src ${from}; ` +
    `media-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`
  );
};

/** Answers a GET of a console file; false when the path names none (the caller answers 404). */
export async function serveConsoleFile(
  pathname: string,
  res: ServerResponse,
  csp = consoleCsp(),
): Promise<boolean> {
  const name = pathname === "/" ? "index.html" : pathname.slice(1);
  if (!/^[\w-]+\.(html|js|css|png|svg)$/.test(name)) return false;
  let body: Buffer;
  try {
    body = await readFile(join(DIST, name));
  } catch {
    return false;
  }
  res.writeHead(200, {
    "content-type": TYPES[name.split(".").pop()!],
    "content-length": body.length,
    "cache-control": name === "index.html" ? "no-cache" : "public, max-age=300",
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  res.end(body);
  return true;
}
