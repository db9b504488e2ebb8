import type { Knobs, Row } from "./summary.ts";

export async function loadHeld(_k: Knobs): Promise<Row[]> {
  return [];
}
