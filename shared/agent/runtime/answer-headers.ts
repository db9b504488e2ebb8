// What a deployment's answers may carry to a browser. A deployment's content must never act with an origin it
// does not own: on the platform's shared origin (the /agents/{id} prefix, the console's origin) an active
// document (HTML, XHTML, SVG, XML) is put in a CSP sandbox (an opaque origin: no storage, cookies or service
// worker of the console), and no answer anywhere may widen a service worker's scope (Service-Worker-Allowed).

/** The sandbox a deployment's HTML gets: its scripts and forms run, in an opaque origin. */
export const HTML_SANDBOX = "sandbox allow-scripts allow-forms allow-popups allow-downloads allow-modals";

const ACTIVE_DOCUMENT =
  /^\s*(text\/html|application\/xhtml\+xml|image\/svg\+xml|application\/xml|text\/xml)\b/i;

/** Whether a response of this content type is a document a browser would run or render as a page. */
export function isActiveDocument(contentType: string | undefined): boolean {
  // A missing type may be sniffed as HTML.
  return contentType === undefined || contentType === "" || ACTIVE_DOCUMENT.test(contentType);
}

type Headers = Record<string, string | string[] | number | undefined>;

/** A runtime's answer headers as the platform passes them on (see above). */
export function containedHeaders(headers: Headers, opts: { sharedOrigin: boolean }): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers))
    if (name.toLowerCase() !== "service-worker-allowed") out[name] = value;
  const type = out["content-type"];
  if (opts.sharedOrigin && isActiveDocument(Array.isArray(type) ? type[0] : type?.toString())) {
    const csp = out["content-security-policy"];
    const own = csp === undefined ? [] : Array.isArray(csp) ? csp : [String(csp)];
    // A second policy is enforced besides the deployment's own: the sandbox holds whatever that one says.
    out["content-security-policy"] = [...own, HTML_SANDBOX];
    out["x-content-type-options"] = "nosniff";
  }
  return out;
}

/** Headers with one value each, as Lambda's streamed answer takes them: several policies are one comma list. */
export function singleValued(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  return out;
}
