import { CLAUSES, type Placeholders, resolveName, split, type Token, tokenize } from "./expressions.ts";

// How many bytes a DynamoDB write can add to what is stored, read from the request alone (what the storage budget
// charges before the write is forwarded): an item's size as DynamoDB counts it (attribute names and values), and for
// an update, what its values can add — or a whole item's limit when its expression copies attributes.

/** DynamoDB's item size limit: the most one update can grow an item by. */
export const MAX_ITEM_BYTES = 400 * 1024;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const utf8 = (s: unknown) => (typeof s === "string" ? Buffer.byteLength(s) : 0);
/** A binary value's length: base64 on the wire (decoded length), bytes as the SDK reads it. */
const base64Bytes = (s: unknown) =>
  s instanceof Uint8Array
    ? s.byteLength
    : typeof s === "string"
      ? Math.floor((s.replace(/=+$/, "").length * 3) / 4)
      : 0;
/** A number's size: about one byte per two significant digits, plus one. */
const numberBytes = (s: unknown) => (typeof s === "string" ? Math.ceil(s.length / 2) + 1 : 0);

/** An AttributeValue's size as DynamoDB counts it (lists and maps: 3 bytes, plus 1 per element). */
export function attributeValueBytes(v: unknown): number {
  if (!isObj(v)) return 0;
  let n = 0;
  for (const [type, x] of Object.entries(v)) {
    if (type === "S") n += utf8(x);
    else if (type === "N") n += numberBytes(x);
    else if (type === "B") n += base64Bytes(x);
    else if (type === "BOOL" || type === "NULL") n += 1;
    else if (type === "SS" && Array.isArray(x)) n += x.reduce((s: number, e) => s + utf8(e), 0);
    else if (type === "NS" && Array.isArray(x)) n += x.reduce((s: number, e) => s + numberBytes(e), 0);
    else if (type === "BS" && Array.isArray(x)) n += x.reduce((s: number, e) => s + base64Bytes(e), 0);
    else if (type === "L" && Array.isArray(x))
      n += 3 + x.reduce((s: number, e) => s + 1 + attributeValueBytes(e), 0);
    else if (type === "M" && isObj(x)) n += 3 + itemBytes(x) + Object.keys(x).length;
  }
  return n;
}

/** An item's size as DynamoDB counts it: each attribute's name and value. */
export function itemBytes(item: unknown): number {
  if (!isObj(item)) return 0;
  let n = 0;
  for (const [name, v] of Object.entries(item)) n += Buffer.byteLength(name) + attributeValueBytes(v);
  return n;
}

/** A document path's text with its names resolved (`a.b[2]`), from `tokens[i]`; its length in tokens. */
function pathAt(tokens: Token[], i: number, p: Placeholders): { path: string; length: number } {
  let path = resolveName(tokens[i].text, p, "UpdateExpression");
  let j = i + 1;
  for (;;) {
    if (tokens[j]?.text === "." && tokens[j + 1]?.kind === "name") {
      path += `.${resolveName(tokens[j + 1].text, p, "UpdateExpression")}`;
      j += 2;
    } else if (tokens[j]?.text === "[" && tokens[j + 1]?.kind === "number" && tokens[j + 2]?.text === "]") {
      path += `[${tokens[j + 1].text}]`;
      j += 3;
    } else return { path, length: j - i };
  }
}

/** The document paths a SET action's value reads (function names are not paths). */
function pathsRead(value: Token[], p: Placeholders): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i++) {
    if (value[i].kind !== "name") continue;
    if (value[i + 1]?.text === "(") continue;
    const { path, length } = pathAt(value, i, p);
    out.push(path);
    i += length - 1;
  }
  return out;
}

/**
 * Whether an UpdateExpression can grow an item by more than its values: a SET whose value reads another attribute
 * (`SET b = a`, `if_not_exists(a, :v)` into b) or its own twice (`list_append(a, a)`) copies stored bytes.
 */
export function updateCopies(expr: string, p: Placeholders): boolean {
  const tokens = tokenize(expr, "UpdateExpression");
  for (let i = 0; i < tokens.length; ) {
    let j = i + 1;
    while (j < tokens.length && !(tokens[j].kind === "name" && CLAUSES.has(tokens[j].text.toUpperCase())))
      j++;
    if (tokens[i].text.toUpperCase() === "SET")
      for (const action of split(tokens.slice(i + 1, j))) {
        const eq = action.findIndex((t) => t.kind === "op" && t.text === "=");
        if (eq < 1) return true;
        const target = pathAt(action, 0, p).path;
        const read = pathsRead(action.slice(eq + 1), p);
        if (read.some((r) => r !== target) || read.length > 1) return true;
      }
    i = j;
  }
  return false;
}

const sumValues = (values: unknown) =>
  isObj(values) ? Object.values(values).reduce((n: number, v) => n + attributeValueBytes(v), 0) : 0;
const sumNames = (names: unknown) =>
  isObj(names) ? Object.values(names).reduce((n: number, v) => n + utf8(v), 0) : 0;

/** The most an UpdateItem (or a transaction's Update) can add: its key, names and values, or a whole item. */
function updateBytes(r: Json): number {
  if (typeof r.UpdateExpression === "string") {
    const p = { names: r.ExpressionAttributeNames, values: r.ExpressionAttributeValues };
    if (updateCopies(r.UpdateExpression, p)) return MAX_ITEM_BYTES;
  }
  const legacy = isObj(r.AttributeUpdates)
    ? Object.entries(r.AttributeUpdates).reduce(
        (n: number, [name, u]) => n + Buffer.byteLength(name) + (isObj(u) ? attributeValueBytes(u.Value) : 0),
        0,
      )
    : 0;
  return Math.min(
    MAX_ITEM_BYTES,
    itemBytes(r.Key) + sumNames(r.ExpressionAttributeNames) + sumValues(r.ExpressionAttributeValues) + legacy,
  );
}

/**
 * The most a DynamoDB call (as the proxy read and allowed it) adds to what is stored: each item it puts, each
 * update's growth; 0 for reads and deletes.
 */
export function dynamoWriteBytes(op: string, input: unknown): number {
  if (!isObj(input)) return 0;
  switch (op) {
    case "PutItem":
      return itemBytes(input.Item);
    case "UpdateItem":
      return updateBytes(input);
    case "BatchWriteItem": {
      let n = 0;
      for (const requests of Object.values(isObj(input.RequestItems) ? input.RequestItems : {}))
        for (const w of Array.isArray(requests) ? requests : [])
          if (isObj(w) && isObj(w.PutRequest)) n += itemBytes(w.PutRequest.Item);
      return n;
    }
    case "TransactWriteItems": {
      let n = 0;
      for (const t of Array.isArray(input.TransactItems) ? input.TransactItems : []) {
        if (!isObj(t)) continue;
        if (isObj(t.Put)) n += itemBytes(t.Put.Item);
        if (isObj(t.Update)) n += updateBytes(t.Update);
      }
      return n;
    }
    default:
      return 0;
  }
}
