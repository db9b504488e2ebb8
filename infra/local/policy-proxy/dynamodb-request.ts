import { partitionKeyValue, projectionNames, updatedNames } from "./expressions.ts";
import { type Authorization, Refused } from "./refusal.ts";

// A DynamoDB API call (JSON 1.0, X-Amz-Target DynamoDB_20120810.<Op>) as the IAM authorization requests AWS makes
// for it: action, table (or index) ARN, and the condition keys dynamodb:LeadingKeys, dynamodb:Attributes,
// dynamodb:Select and dynamodb:ReturnValues.

export interface DynamoTables {
  /** The table's ARN from a TableName (a name or an ARN). */
  arn(table: string): string;
  /** The partition key attribute of a table or one of its indexes; undefined when the table is not known. */
  partitionKey(table: string, index?: string): string | undefined;
}

type Json = Record<string, unknown>;
const TARGET = /^DynamoDB_20120810\.([A-Za-z]+)$/;

const invalid = (msg: string) => new Refused("ValidationException", msg);
const obj = (v: unknown, what: string): Json => {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw invalid(`${what} must be an object`);
  return v as Json;
};
const list = (v: unknown, what: string): unknown[] => {
  if (!Array.isArray(v)) throw invalid(`${what} must be a list`);
  return v;
};
const str = (v: unknown, what: string): string => {
  if (typeof v !== "string" || v.length === 0) throw invalid(`${what} must be a non-empty string`);
  return v;
};
const optStr = (v: unknown, what: string) => (v === undefined ? undefined : str(v, what));

// DynamoDB Local takes names only (an ARN is refused there), case-sensitive, of these characters.
const NAME = /^[a-zA-Z0-9_.-]{3,255}$/;
/** A table or index name as DynamoDB Local reads it; anything else it would refuse, refused here first. */
const name = (v: unknown, what: string): string => {
  const n = str(v, what);
  if (!NAME.test(n))
    throw invalid(
      `Invalid table/index name ${what}: names are 3 to 255 characters of a-z, A-Z, 0-9, '_', '-' and '.'`,
    );
  return n;
};
const optName = (v: unknown, what: string) => (v === undefined ? undefined : name(v, what));

/** The operation named by X-Amz-Target. */
export function dynamoOperation(target: string | string[] | undefined): string {
  const m = typeof target === "string" ? TARGET.exec(target) : null;
  if (!m)
    throw new Refused("UnknownOperationException", "The X-Amz-Target header names no DynamoDB operation.");
  return m[1];
}

/** A partition key's AttributeValue as the string IAM compares (S, N, or B as sent). */
function keyString(v: unknown, key: string): string {
  const av = obj(v, `the key attribute ${key}`);
  // DynamoDB refuses a value of two types; the proxy must not pick one of them for LeadingKeys.
  if (Object.keys(av).length !== 1)
    throw invalid(`the partition key ${key}'s AttributeValue must hold exactly one data type`);
  for (const t of ["S", "N", "B"]) if (typeof av[t] === "string") return av[t] as string;
  throw invalid(`the partition key ${key} must be a string, number or binary value`);
}

function leadingKey(item: unknown, pk: string, what: string): string {
  const it = obj(item, what);
  if (!Object.hasOwn(it, pk)) throw invalid(`${what} lacks the partition key ${pk}`);
  return keyString(it[pk], pk);
}

const readNames = (r: Json): string[] | undefined => {
  if (r.ProjectionExpression !== undefined)
    return projectionNames(str(r.ProjectionExpression, "ProjectionExpression"), placeholders(r));
  if (r.AttributesToGet !== undefined)
    return list(r.AttributesToGet, "AttributesToGet").map((a) => str(a, "AttributesToGet"));
  return undefined;
};
const placeholders = (r: Json) => ({
  names: r.ExpressionAttributeNames,
  values: r.ExpressionAttributeValues,
});

interface Item {
  table: string;
  index?: string;
  leading?: string[];
  attributes?: string[];
  select?: string;
  returnValues?: string;
}

function pkOf(tables: DynamoTables, table: string, index?: string): string {
  const pk = tables.partitionKey(table, index);
  if (!pk)
    throw new Refused(
      "ResourceNotFoundException",
      `Requested resource not found: ${index ? `index ${index} of ` : ""}table ${table}`,
    );
  return pk;
}

/** What one item operation (as itself or inside a transaction) reads or writes. */
function itemOp(op: string, r: Json, tables: DynamoTables): Item {
  const table = name(r.TableName, "TableName");
  const pk = pkOf(tables, table);
  const returnValues = optStr(r.ReturnValues, "ReturnValues");
  if (op === "PutItem") {
    const item = obj(r.Item, "Item");
    return { table, leading: [leadingKey(item, pk, "Item")], attributes: Object.keys(item), returnValues };
  }
  const key = obj(r.Key, "Key");
  const leading = [leadingKey(key, pk, "Key")];
  if (op === "UpdateItem") {
    const written =
      r.UpdateExpression !== undefined
        ? updatedNames(str(r.UpdateExpression, "UpdateExpression"), placeholders(r))
        : [];
    const legacy =
      r.AttributeUpdates !== undefined ? Object.keys(obj(r.AttributeUpdates, "AttributeUpdates")) : [];
    return { table, leading, attributes: unique([...Object.keys(key), ...written, ...legacy]), returnValues };
  }
  if (op === "GetItem") return { table, leading, attributes: readNames(r) };
  return { table, leading, attributes: Object.keys(key), returnValues };
}

function query(r: Json, tables: DynamoTables): Item {
  const table = name(r.TableName, "TableName");
  const index = optName(r.IndexName, "IndexName");
  const pk = pkOf(tables, table, index);
  let value: unknown;
  if (r.KeyConditionExpression !== undefined)
    value = partitionKeyValue(str(r.KeyConditionExpression, "KeyConditionExpression"), pk, placeholders(r));
  else {
    const cond = obj(obj(r.KeyConditions, "KeyConditions")[pk], `KeyConditions.${pk}`);
    if (cond.ComparisonOperator !== "EQ") throw invalid(`KeyConditions must compare ${pk} with EQ`);
    const values = list(cond.AttributeValueList, "AttributeValueList");
    if (values.length !== 1) throw invalid("AttributeValueList must hold one value");
    value = values[0];
  }
  return {
    table,
    index,
    leading: [keyString(value, pk)],
    attributes: readNames(r),
    select: optStr(r.Select, "Select"),
  };
}

const unique = (xs: string[]) => [...new Set(xs)];

function batch(op: "BatchGetItem" | "BatchWriteItem", r: Json, tables: DynamoTables): Item[] {
  const requests = obj(r.RequestItems, "RequestItems");
  const tablesOut = Object.keys(requests);
  if (tablesOut.length === 0) throw invalid("RequestItems must name at least one table");
  return tablesOut.map((table) => {
    const pk = pkOf(tables, name(table, "RequestItems"));
    if (op === "BatchGetItem") {
      const t = obj(requests[table], `RequestItems.${table}`);
      const keys = list(t.Keys, "Keys");
      return { table, leading: unique(keys.map((k) => leadingKey(k, pk, "Key"))), attributes: readNames(t) };
    }
    const leading: string[] = [];
    const attributes: string[] = [];
    for (const w of list(requests[table], `RequestItems.${table}`)) {
      const req = obj(w, "WriteRequest");
      const kinds = Object.keys(req);
      if (kinds.length !== 1) throw invalid("A WriteRequest holds exactly one PutRequest or DeleteRequest");
      const item =
        kinds[0] === "PutRequest"
          ? obj(obj(req.PutRequest, "PutRequest").Item, "Item")
          : kinds[0] === "DeleteRequest"
            ? obj(obj(req.DeleteRequest, "DeleteRequest").Key, "Key")
            : undefined;
      if (!item) throw invalid(`Unknown write request ${kinds[0]}`);
      leading.push(leadingKey(item, pk, kinds[0] === "PutRequest" ? "Item" : "Key"));
      attributes.push(...Object.keys(item));
    }
    if (leading.length === 0) throw invalid(`RequestItems.${table} must hold at least one request`);
    return { table, leading: unique(leading), attributes: unique(attributes) };
  });
}

const TRANSACT_WRITE: Record<string, string> = {
  Put: "PutItem",
  Update: "UpdateItem",
  Delete: "DeleteItem",
  ConditionCheck: "ConditionCheckItem",
};

function authorization(action: string, it: Item, tables: DynamoTables): Authorization {
  const context: Record<string, string | string[]> = {};
  if (it.leading) context["dynamodb:LeadingKeys"] = it.leading;
  if (it.attributes) context["dynamodb:Attributes"] = it.attributes;
  if (it.select) context["dynamodb:Select"] = it.select;
  if (it.returnValues) context["dynamodb:ReturnValues"] = it.returnValues;
  const arn = tables.arn(it.table);
  return { action: `dynamodb:${action}`, resource: it.index ? `${arn}/index/${it.index}` : arn, context };
}

/** The authorization requests for a DynamoDB call; a refusal when the call cannot be read. */
export function dynamoAuthorizations(op: string, body: unknown, tables: DynamoTables): Authorization[] {
  const r = obj(body, "The request body");
  const auth = (action: string, it: Item) => authorization(action, it, tables);
  switch (op) {
    case "GetItem":
    case "PutItem":
    case "UpdateItem":
    case "DeleteItem":
      return [auth(op, itemOp(op, r, tables))];
    case "Query":
      return [auth(op, query(r, tables))];
    case "BatchGetItem":
    case "BatchWriteItem":
      return batch(op, r, tables).map((it) => auth(op, it));
    case "TransactWriteItems":
    case "TransactGetItems": {
      const items = list(r.TransactItems, "TransactItems");
      if (items.length === 0) throw invalid("TransactItems must hold at least one item");
      return items.map((t) => {
        const el = obj(t, "TransactItem");
        const kinds = Object.keys(el);
        if (kinds.length !== 1) throw invalid("A TransactItem holds exactly one operation");
        const action =
          op === "TransactGetItems" ? (kinds[0] === "Get" ? "GetItem" : undefined) : TRANSACT_WRITE[kinds[0]];
        if (!action) throw invalid(`Unknown transaction item ${kinds[0]}`);
        return auth(action, itemOp(action, obj(el[kinds[0]], kinds[0]), tables));
      });
    }
    case "Scan": {
      const table = name(r.TableName, "TableName");
      pkOf(tables, table);
      const index = optName(r.IndexName, "IndexName");
      return [auth(op, { table, index, attributes: readNames(r), select: optStr(r.Select, "Select") })];
    }
    case "ExecuteStatement":
    case "BatchExecuteStatement":
    case "ExecuteTransaction":
      // PartiQL names its keys inside a statement the proxy does not parse: refused rather than let through with
      // no dynamodb:LeadingKeys (a ForAllValues condition on a missing key holds).
      throw new Refused("AccessDeniedException", `The local cloud does not authorize PartiQL (${op}).`);
    default:
      return [auth(op, tableCall(op, r, tables))];
  }
}

// Calls that carry no item, by where they name their table: each read as DynamoDB Local reads it. Any other
// operation (backups, exports, imports, global tables, streams…) names tables in fields the proxy does not read.
const BY_TABLE_NAME = [
  "CreateTable",
  "DeleteTable",
  "DescribeTable",
  "UpdateTable",
  "DescribeTimeToLive",
  "UpdateTimeToLive",
  "DescribeContinuousBackups",
  "UpdateContinuousBackups",
];
const BY_RESOURCE_ARN = ["ListTagsOfResource", "TagResource", "UntagResource"];
const ACCOUNT_WIDE = ["ListTables", "DescribeLimits", "DescribeEndpoints"];
const TABLE_ARN = /^arn:aws:dynamodb:[^:]+:[^:]+:table\/([a-zA-Z0-9_.-]{3,255})$/;

function tableCall(op: string, r: Json, tables: DynamoTables): Item {
  if (ACCOUNT_WIDE.includes(op)) return { table: "*" };
  if (BY_TABLE_NAME.includes(op)) return { table: name(r.TableName, "TableName") };
  if (BY_RESOURCE_ARN.includes(op)) {
    // DynamoDB Local reads the table name out of the ARN: the ARN must be the one the policy is checked against.
    const arn = str(r.ResourceArn, "ResourceArn");
    const m = TABLE_ARN.exec(arn);
    if (!m || tables.arn(m[1]) !== arn)
      throw invalid(`ResourceArn must be a table of this region and account`);
    return { table: m[1] };
  }
  throw new Refused("AccessDeniedException", `The local cloud's proxy does not authorize ${op}.`);
}
