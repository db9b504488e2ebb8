// A .env file named by the graph config's `env`: KEY=VALUE lines, `export ` prefixes, # comments, and single
// or double quoted values (double quotes understand \n, \r, \t, \" and \\; quoted values may span lines).
// The `s` flag: a line is everything between line feeds, so a lone CR or a U+2028 in a value is part of it.
const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/s;
const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = LINE.exec(lines[i]!);
    if (!m) continue;
    const key = m[1]!;
    let value = m[2]!;
    const quote = value[0];
    if (quote === '"' || quote === "'") {
      let body = value.slice(1);
      // A quoted value ends at its closing quote, possibly on a later line.
      while (!closes(body, quote) && i + 1 < lines.length) body += `\n${lines[++i]}`;
      const end = closingIndex(body, quote);
      body = end === -1 ? body : body.slice(0, end);
      value = quote === '"' ? body.replace(/\\([nrt"\\])/g, (_, c: string) => ESCAPES[c]!) : body;
    } else {
      value = value.replace(/\s+#.*$/s, "").trim();
    }
    if (key !== "__proto__") out[key] = value;
  }
  return out;
}

function closingIndex(body: string, quote: string): number {
  for (let i = 0; i < body.length; i++) {
    if (quote === '"' && body[i] === "\\") i++;
    else if (body[i] === quote) return i;
  }
  return -1;
}

const closes = (body: string, quote: string) => closingIndex(body, quote) !== -1;
