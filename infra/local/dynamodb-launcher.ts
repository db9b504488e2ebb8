import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// DynamoDB Local has no option for the address it listens on: it takes every interface. LoopbackDynamoDbLocal.java
// (beside this file) starts it as its own ServerRunner does with its connectors bound to loopback. A machine with
// only a JRE cannot compile Java, so the class compiled from that source (`javac --release 17`, runs on Java 17+)
// is kept here; after changing the source, compile it again and paste the output of `base64 -w0` below.
const CLASS_BASE64 = [
  "yv66vgAAAD0AWAoAAgADBwAEDAAFAAYBABBqYXZhL2xhbmcvT2JqZWN0AQAGPGluaXQ+AQADKClWCAAIAQARcGxhdGZvcm0uYmlu",
  "ZEhvc3QIAAoBAAkxMjcuMC4wLjEKAAwADQcADgwADwAQAQAQamF2YS9sYW5nL1N5c3RlbQEAC2dldFByb3BlcnR5AQA4KExqYXZh",
  "L2xhbmcvU3RyaW5nO0xqYXZhL2xhbmcvU3RyaW5nOylMamF2YS9sYW5nL1N0cmluZzsIABIBADljb20uYW1hem9uYXdzLnNlcnZp",
  "Y2VzLmR5bmFtb2RidjIubG9jYWwubWFpbi5TZXJ2ZXJSdW5uZXIKABQAFQcAFgwAFwAYAQAPamF2YS9sYW5nL0NsYXNzAQAHZm9y",
  "TmFtZQEAJShMamF2YS9sYW5nL1N0cmluZzspTGphdmEvbGFuZy9DbGFzczsIABoBAB9jcmVhdGVTZXJ2ZXJGcm9tQ29tbWFuZExp",
  "bmVBcmdzBwAcAQATW0xqYXZhL2xhbmcvU3RyaW5nOwoAFAAeDAAfACABAAlnZXRNZXRob2QBAEAoTGphdmEvbGFuZy9TdHJpbmc7",
  "W0xqYXZhL2xhbmcvQ2xhc3M7KUxqYXZhL2xhbmcvcmVmbGVjdC9NZXRob2Q7CgAiACMHACQMACUAJgEAGGphdmEvbGFuZy9yZWZs",
  "ZWN0L01ldGhvZAEABmludm9rZQEAOShMamF2YS9sYW5nL09iamVjdDtbTGphdmEvbGFuZy9PYmplY3Q7KUxqYXZhL2xhbmcvT2Jq",
  "ZWN0OwoAAgAoDAApACoBAAhnZXRDbGFzcwEAEygpTGphdmEvbGFuZy9DbGFzczsIACwBAAZzZXJ2ZXIKABQALgwALwAwAQAQZ2V0",
  "RGVjbGFyZWRGaWVsZAEALShMamF2YS9sYW5nL1N0cmluZzspTGphdmEvbGFuZy9yZWZsZWN0L0ZpZWxkOwoAMgAzBwA0DAA1ADYB",
  "ABdqYXZhL2xhbmcvcmVmbGVjdC9GaWVsZAEADXNldEFjY2Vzc2libGUBAAQoWilWCgAyADgMADkAOgEAA2dldAEAJihMamF2YS9s",
  "YW5nL09iamVjdDspTGphdmEvbGFuZy9PYmplY3Q7CAA8AQANZ2V0Q29ubmVjdG9ycwcAPgEAE1tMamF2YS9sYW5nL09iamVjdDsH",
  "AEABAB9qYXZhL2xhbmcvSWxsZWdhbFN0YXRlRXhjZXB0aW9uCABCAQAnRHluYW1vREIgTG9jYWwgaGFzIG5vIGNvbm5lY3RvciB0",
  "byBiaW5kCgA/AEQMAAUARQEAFShMamF2YS9sYW5nL1N0cmluZzspVggARwEAB3NldEhvc3QHAEkBABBqYXZhL2xhbmcvU3RyaW5n",
  "CABLAQAFc3RhcnQHAE0BABVMb29wYmFja0R5bmFtb0RiTG9jYWwBAARDb2RlAQAPTGluZU51bWJlclRhYmxlAQAEbWFpbgEAFihb",
  "TGphdmEvbGFuZy9TdHJpbmc7KVYBAA1TdGFja01hcFRhYmxlAQAKRXhjZXB0aW9ucwcAVQEAE2phdmEvbGFuZy9FeGNlcHRpb24B",
  "AApTb3VyY2VGaWxlAQAaTG9vcGJhY2tEeW5hbW9EYkxvY2FsLmphdmEAMQBMAAIAAAAAAAIAAQAFAAYAAQBOAAAAHQABAAEAAAAF",
  "KrcAAbEAAAABAE8AAAAGAAEAAAAIAAkAUABRAAIATgAAATYABgALAAAAxxIHEgm4AAtMEhG4ABNNLBIZBL0AFFkDEhtTtgAdAQS9",
  "AAJZAypTtgAhTi22ACcSK7YALToEGQQEtgAxGQQttgA3OgUZBbYAJxI7A70AFLYAHRkFA70AArYAIcAAPToGGQa+mgANuwA/WRJB",
  "twBDvxkGOgcZB742CAM2CRUJFQiiADEZBxUJMjoKGQq2ACcSRgS9ABRZAxJIU7YAHRkKBL0AAlkDK1O2ACFXhAkBp//OLbYAJxJK",
  "A70AFLYAHS0DvQACtgAhV7EAAAACAE8AAAAuAAsAAAAKAAgACwAOAAwAKgANADUADgA7AA8AQwAQAF8AEQBvABIAsAATAMYAFABS",
  "AAAAKQAD/wBvAAcHABsHAEgHABQHAAIHADIHAAIHAD0AAP4ACwcAPQEB+AA0AFMAAAAEAAEAVAABAFYAAAACAFc=",
].join("");

export const LAUNCHER_CLASS = "LoopbackDynamoDbLocal";

/** The folder holding the launcher's class file (written into `dir` when missing or different). */
export function launcherClassDir(dir: string): string {
  const out = join(dir, "platform-launcher");
  const file = join(out, `${LAUNCHER_CLASS}.class`);
  const bytes = Buffer.from(CLASS_BASE64, "base64");
  let current: Buffer | undefined;
  try {
    current = readFileSync(file);
  } catch {}
  if (!current?.equals(bytes)) {
    mkdirSync(out, { recursive: true });
    writeFileSync(file, bytes);
  }
  return out;
}
