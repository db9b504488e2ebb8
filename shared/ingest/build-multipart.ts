import { quoteParam } from "./header-params.ts";

/** A part to serialize; `data` strings are written as UTF-8. */
export interface PartInit {
  name: string;
  data: Uint8Array | string;
  contentType?: string;
  filename?: string;
  /** Extra part headers, written as given after Content-Disposition and Content-Type. */
  headers?: Record<string, string>;
}

function headerText(what: string, value: string): string {
  // A line break would end the header early and let the value inject headers or a delimiter.
  if (/[\r\n]/.test(value)) throw new TypeError(`${what} contains a line break`);
  return value;
}

/**
 * Serializes parts as multipart/form-data with CRLF line ends, the way the LangSmith SDKs do;
 * send it with `content-type: multipart/form-data; boundary=<boundary>`.
 */
export function buildMultipart(parts: PartInit[], boundary: string): Buffer {
  if (boundary === "") throw new TypeError("boundary is empty");
  headerText("boundary", boundary);
  const dashBoundary = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\n--${boundary}`);
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const data =
      typeof part.data === "string"
        ? Buffer.from(part.data)
        : Buffer.from(part.data.buffer, part.data.byteOffset, part.data.byteLength); // a view, not a copy
    // Data that holds a delimiter, or opens with one (after the blank line), would end the part early.
    if (data.indexOf(delimiter) >= 0 || data.subarray(0, dashBoundary.length).equals(dashBoundary)) {
      throw new RangeError(`the data of part "${part.name}" contains the boundary; choose another`);
    }
    let head = `--${boundary}\r\nContent-Disposition: form-data; name=${quoteParam(headerText("name", part.name))}`;
    if (part.filename !== undefined)
      head += `; filename=${quoteParam(headerText("filename", part.filename))}`;
    head += "\r\n";
    if (part.contentType !== undefined)
      head += `Content-Type: ${headerText("contentType", part.contentType)}\r\n`;
    for (const [k, v] of Object.entries(part.headers ?? {})) {
      head += `${headerText("header name", k)}: ${headerText(`header ${k}`, v)}\r\n`;
    }
    chunks.push(Buffer.from(`${head}\r\n`), data, Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}
