// Moved to shared/time.ts; the export domain's imports are switched when its split lands.
export { canonicalTime, dayOf } from "../time.ts";
