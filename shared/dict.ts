// A map keyed by untrusted names (query names, header names, feedback keys, JSON keys): an object without a
// prototype, so `toString`, `constructor` or `__proto__` are ordinary keys, never inherited members or the
// prototype itself. Read it with `Object.hasOwn` or `?? default`; JSON.stringify and zod read it as any object.
export function dict<T>(entries?: Iterable<readonly [string, T]>): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  if (entries) for (const [k, v] of entries) out[k] = v;
  return out;
}
