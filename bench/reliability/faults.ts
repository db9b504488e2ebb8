import type { Knobs, Row } from "./summary.ts";

export async function faultInjection(_k: Knobs): Promise<Row[]> {
  return [];
}
