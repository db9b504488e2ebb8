// How deep JSON text nests, read from the text itself before anything parses it: recursive code downstream
// (JSON.stringify, the DynamoDB marshaller, schema checks) overflows the stack on a body nested thousands deep.

/** Whether `text` nests arrays and objects deeper than `max` (brackets inside strings do not count). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
