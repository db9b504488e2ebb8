import { clip } from "../errors.ts";

// `value; name=token; other="quoted \"string\""` as in Content-Type and Content-Disposition.

export interface HeaderParam {
  /** Lower-cased: parameter names are case-insensitive. */
  name: string;
  value: string;
  /** Span in the header text, from the `;` that opens it, so a parameter can be cut out. */
  start: number;
  end: number;
}

export interface ParsedHeader {
  value: string;
  params: HeaderParam[];
}

const isSpace = (c: string | undefined) => c === " " || c === "\t";

/** Parses a header value; a string result is the reason it is malformed. */
export function parseHeaderParams(text: string): ParsedHeader | string {
  const len = text.length;
  const semi = text.indexOf(";");
  const value = text.slice(0, semi < 0 ? len : semi).trim();
  const params: HeaderParam[] = [];
  let i = semi < 0 ? len : semi;
  while (i < len) {
    const start = i++;
    while (isSpace(text[i])) i++;
    if (i >= len || text[i] === ";") continue; // empty segment, e.g. a trailing `;`
    const nameStart = i;
    while (i < len && text[i] !== "=" && text[i] !== ";") i++;
    const name = text.slice(nameStart, i).trim().toLowerCase();
    if (text[i] !== "=") return `parameter "${clip(name)}" has no value`;
    if (name === "") return "parameter without a name";
    i++;
    while (isSpace(text[i])) i++;
    let v = "";
    if (text[i] === '"') {
      // quoted-string: a backslash makes the next character literal (RFC 9110 quoted-pair).
      for (i++; ; i++) {
        if (i >= len) return `unterminated quoted value of parameter "${clip(name)}"`;
        const c = text[i];
        if (c === '"') break;
        if (c === "\\" && i + 1 < len) i++;
        v += text[i];
      }
      i++;
      while (isSpace(text[i])) i++;
      if (i < len && text[i] !== ";")
        return `unexpected text after the quoted value of parameter "${clip(name)}"`;
    } else {
      const valueStart = i;
      while (i < len && text[i] !== ";") i++;
      v = text.slice(valueStart, i).trim();
    }
    params.push({ name, value: v, start, end: i });
  }
  return { value, params };
}

/** The one value of a parameter; a string result says why there is none usable. */
export function singleParam(parsed: ParsedHeader, name: string): { value?: string } | string {
  const found = parsed.params.filter((p) => p.name === name);
  if (found.length > 1) return `parameter "${name}" is given ${found.length} times`;
  return { value: found[0]?.value };
}

/** A quoted-string for a header parameter; CR and LF cannot be carried, so callers must reject them. */
export function quoteParam(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}
