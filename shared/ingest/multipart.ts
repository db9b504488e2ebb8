import { clip, MalformedBody } from "../errors.ts";
import { parseHeaderParams, singleParam } from "./header-params.ts";

export { buildMultipart, type PartInit } from "./build-multipart.ts";

/** One multipart/form-data part (RFC 7578). */
export interface Part {
  name: string;
  /** The part's Content-Type without its informational `length` parameter; text/plain when absent. */
  contentType: string;
  filename?: string;
  /** Part headers, names lower-cased. */
  headers: Record<string, string>;
  /** A view into the body, not a copy. */
  data: Buffer;
}

const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;
/** Real part headers are a few hundred bytes; a bigger block is data that lost its blank line. */
const MAX_HEADER_BYTES = 64 * 1024;
/** RFC 2046 allows 70; a little slack for lax clients. */
const MAX_BOUNDARY = 200;
/** Headers that must not be ambiguous. */
const SINGLE_HEADERS = new Set(["content-disposition", "content-type", "content-length"]);

/** The boundary parameter of a multipart/form-data Content-Type. */
function boundaryOf(contentType: string): string {
  const parsed = parseHeaderParams(contentType);
  if (typeof parsed === "string") throw new MalformedBody(`Malformed Content-Type: ${parsed}`);
  if (parsed.value.toLowerCase() !== "multipart/form-data") {
    throw new MalformedBody(`Expected Content-Type multipart/form-data, got "${clip(parsed.value)}"`);
  }
  const b = singleParam(parsed, "boundary");
  if (typeof b === "string") throw new MalformedBody(`Malformed Content-Type: ${b}`);
  const boundary = b.value;
  if (!boundary) throw new MalformedBody("Content-Type multipart/form-data has no boundary parameter");
  if (boundary.length > MAX_BOUNDARY || /[\r\n]/.test(boundary)) {
    throw new MalformedBody(
      `Multipart boundary is longer than ${MAX_BOUNDARY} characters or contains a line break`,
    );
  }
  return boundary;
}

/**
 * Splits a multipart/form-data body into its parts. One pass: Buffer.indexOf finds each delimiter,
 * part data are views into `body`. Lines may end in CRLF or a bare LF; preamble and epilogue are ignored.
 */
export function parseMultipart(body: Buffer, contentType: string): Part[] {
  const boundary = boundaryOf(contentType);
  const dashBoundary = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\n--${boundary}`);
  // The first dash-boundary opens the body or a line; anything before it is preamble.
  const atStart = body.subarray(0, dashBoundary.length).equals(dashBoundary);
  const found = atStart ? 0 : body.indexOf(delimiter);
  if (found < 0) throw new MalformedBody(`Multipart body does not contain the boundary "--${boundary}"`);
  const parts: Part[] = [];
  let pos = (atStart ? 0 : found + 1) + dashBoundary.length;
  for (let i = 0; ; i++) {
    // pos is just past a dash-boundary: either the close delimiter or the end of a delimiter line.
    if (body[pos] === DASH && body[pos + 1] === DASH) return parts;
    pos = skipLineEnd(body, pos, i);
    if (pos >= body.length) {
      throw new MalformedBody(`Multipart body ends without the closing delimiter "--${boundary}--"`, i);
    }
    if (body.subarray(pos, pos + dashBoundary.length).equals(dashBoundary)) {
      throw new MalformedBody(`Multipart part ${i} is empty: no headers before the next delimiter`, i);
    }
    const next = body.indexOf(delimiter, pos);
    if (next < 0) {
      throw new MalformedBody(`Multipart part ${i} is not followed by a delimiter or "--${boundary}--"`, i);
    }
    // The CR of a CRLF delimiter belongs to the delimiter, not to the data.
    const end = next > pos && body[next - 1] === CR ? next - 1 : next;
    parts.push(parsePart(body, pos, end, i));
    pos = next + delimiter.length;
  }
}

/** After a boundary: optional transport padding (spaces, tabs), then CRLF or LF. */
function skipLineEnd(body: Buffer, pos: number, index: number): number {
  let p = pos;
  while (body[p] === 0x20 || body[p] === 0x09) p++;
  if (body[p] === CR && body[p + 1] === LF) return p + 2;
  if (body[p] === LF) return p + 1;
  throw new MalformedBody(
    `Multipart delimiter before part ${index} is followed by unexpected bytes instead of a line end`,
    index,
  );
}

const bad = (index: number, what: string) => new MalformedBody(`Multipart part ${index}: ${what}`, index);

function parsePart(body: Buffer, start: number, end: number, index: number): Part {
  const { lines, dataStart } = headerLines(body, start, end, index);
  const headers = headerRecord(lines, index);
  const data = body.subarray(dataStart, end);
  const disposition = headers["content-disposition"];
  if (disposition === undefined) throw bad(index, "no Content-Disposition header, so the part has no name");
  const cd = parseHeaderParams(disposition);
  if (typeof cd === "string") throw bad(index, `malformed Content-Disposition: ${cd}`);
  if (cd.value.toLowerCase() !== "form-data") {
    throw bad(index, `Content-Disposition is "${clip(cd.value)}", not form-data`);
  }
  const name = singleParam(cd, "name");
  const filename = singleParam(cd, "filename");
  if (typeof name === "string") throw bad(index, name);
  if (typeof filename === "string") throw bad(index, filename);
  if (!name.value) throw bad(index, "Content-Disposition has no name");
  const length = headers["content-length"];
  if (length !== undefined && (!/^\d+$/.test(length) || Number(length) !== data.length)) {
    throw bad(index, `Content-Length ${clip(length)} does not match the ${data.length} bytes of data`);
  }
  const part: Part = {
    name: name.value,
    contentType: contentTypeOf(headers["content-type"], index),
    headers,
    data,
  };
  if (filename.value !== undefined) part.filename = filename.value;
  return part;
}

/** The header lines of a part, up to the blank line; the data start just after it. */
function headerLines(body: Buffer, start: number, end: number, index: number) {
  const lines: string[] = [];
  let p = start;
  while (p < end) {
    const lf = body.indexOf(LF, p);
    if (lf < 0 || lf >= end) throw bad(index, "header block has no end (no blank line before the part data)");
    if (lf - start > MAX_HEADER_BYTES)
      throw bad(index, `header block is longer than ${MAX_HEADER_BYTES} bytes`);
    const lineEnd = lf > p && body[lf - 1] === CR ? lf - 1 : lf;
    if (lineEnd === p) return { lines, dataStart: lf + 1 };
    lines.push(body.toString("utf8", p, lineEnd));
    p = lf + 1;
  }
  // The header block ends with the part: a part without a body, which RFC 2046 allows.
  return { lines, dataStart: end };
}

function headerRecord(lines: string[], index: number): Record<string, string> {
  const headers: Record<string, string> = {};
  let last: string | undefined;
  for (const line of lines) {
    // obs-fold: a line starting with whitespace continues the previous header.
    if (line[0] === " " || line[0] === "\t") {
      if (last === undefined) throw bad(index, "header block starts with a continuation line");
      headers[last] = `${headers[last]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    const name = line.slice(0, Math.max(colon, 0)).trim().toLowerCase();
    if (name === "")
      throw bad(index, `header line without a name and ':' (${JSON.stringify(clip(line, 40))})`);
    // Assigning "__proto__" would set the prototype (or do nothing): a header of that name is dropped.
    if (name === "__proto__") continue;
    const value = line.slice(colon + 1).trim();
    const prev = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (prev !== undefined && SINGLE_HEADERS.has(name)) throw bad(index, `${name} header given twice`);
    headers[name] = prev === undefined ? value : `${prev}, ${value}`;
    last = name;
  }
  return headers;
}

/** The part's media type with any `length` parameter cut out (the SDKs add it; it is only a hint). */
function contentTypeOf(header: string | undefined, index: number): string {
  if (header === undefined || header === "") return "text/plain";
  const parsed = parseHeaderParams(header);
  if (typeof parsed === "string") throw bad(index, `malformed Content-Type: ${parsed}`);
  let out = header;
  for (let i = parsed.params.length - 1; i >= 0; i--) {
    const param = parsed.params[i];
    if (param.name === "length") out = out.slice(0, param.start) + out.slice(param.end);
  }
  return out.trim() || "text/plain";
}
