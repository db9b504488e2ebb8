// The XML of AWS's Query protocols (IAM's answers): elements from plain values, lists as repeated members.
export type XmlValue = string | number | boolean | XmlValue[] | { [name: string]: XmlValue };

const escapeXml = (s: string) =>
  s.replace(
    /[<>&'"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;" })[c]!,
  );

function element(name: string, value: XmlValue): string {
  if (Array.isArray(value)) return `<${name}>${value.map((v) => body(v)).join("")}</${name}>`;
  return `<${name}>${body(value)}</${name}>`;
}

function body(value: XmlValue): string {
  if (typeof value === "object" && !Array.isArray(value))
    return Object.entries(value)
      .map(([k, v]) => element(k, v))
      .join("");
  if (Array.isArray(value)) return value.map(body).join("");
  return escapeXml(String(value));
}

/** `<root xmlns=IAM's>…</root>`. */
export function xmlDocument(root: string, value: { [name: string]: XmlValue }): string {
  return `<${root} xmlns="https://iam.amazonaws.com/doc/2010-05-08/">${body(value)}</${root}>`;
}
