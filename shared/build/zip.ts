import { crc32, deflateRawSync, inflateRawSync } from "node:zlib";

// A zip archive (PKWARE APPNOTE: local headers, deflated data, central directory, end record), enough for a
// Lambda function's code: the deploy step packs a revision's bundles with the runtime's entry shim. No zip64:
// Lambda's code limit (250 MB unzipped) stays far below its 4 GB.
export interface ZipEntry {
  name: string;
  data: Uint8Array;
}

const DOS_TIME = 0; // 1980-01-01 00:00: file times do not matter to Lambda, and a fixed one keeps zips reproducible
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name.replace(/\\/g, "/"), "utf8");
    const packed = deflateRawSync(e.data);
    const crc = crc32(e.data);
    // The local header and the central directory entry share a run of fields (from "version needed" on).
    const shared = (buf: Buffer, at: number) => {
      buf.writeUInt16LE(20, at); // version needed
      buf.writeUInt16LE(0x0800, at + 2); // UTF-8 names
      buf.writeUInt16LE(8, at + 4); // deflate
      buf.writeUInt16LE(DOS_TIME, at + 6);
      buf.writeUInt16LE(DOS_DATE, at + 8);
      buf.writeUInt32LE(crc, at + 10);
      buf.writeUInt32LE(packed.length, at + 14);
      buf.writeUInt32LE(e.data.length, at + 18);
      buf.writeUInt16LE(name.length, at + 22);
      return buf;
    };
    const local = shared(Buffer.alloc(30), 4);
    local.writeUInt32LE(0x04034b50, 0);
    locals.push(local, name, packed);
    const dir = shared(Buffer.alloc(46), 6);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix
    dir.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    dir.writeUInt32LE(offset, 42);
    central.push(dir, name);
    offset += local.length + name.length + packed.length;
  }
  const dirBytes = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirBytes, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...central, end]);
}

/** Lambda's limit on a function's code unzipped (layers included). */
const MAX_UNZIPPED = 250 * 1024 * 1024;

const corrupt = (why: string) => new Error(`The function's code is not a zip file Lambda can read: ${why}`);

/**
 * The entries of a zip archive (stored or deflated, no zip64), as the local Lambda service unpacks a function's
 * code: names checked (relative, no `..`), CRCs checked, at most Lambda's 250 MB unzipped.
 */
export function unzip(archive: Buffer, maxBytes = MAX_UNZIPPED): ZipEntry[] {
  let end = -1;
  for (let at = archive.length - 22; at >= Math.max(0, archive.length - 22 - 0xffff); at--)
    if (archive.readUInt32LE(at) === 0x06054b50) {
      end = at;
      break;
    }
  if (end < 0) throw corrupt("no end of central directory");
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const out: ZipEntry[] = [];
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > archive.length || archive.readUInt32LE(at) !== 0x02014b50)
      throw corrupt("a bad directory entry");
    const method = archive.readUInt16LE(at + 10);
    const crc = archive.readUInt32LE(at + 16);
    const packedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const skip = nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
    const name = archive.subarray(at + 46, at + 46 + nameLength).toString("utf8");
    const local = archive.readUInt32LE(at + 42);
    at += 46 + skip;
    if (name.endsWith("/")) continue;
    if (
      !name ||
      name.startsWith("/") ||
      name.includes("\\") ||
      name.split("/").some((s) => s === ".." || s === "")
    )
      throw corrupt(`an entry named ${JSON.stringify(name)}`);
    total += size;
    if (total > maxBytes) throw corrupt(`more than ${maxBytes} bytes unzipped`);
    if (local + 30 > archive.length || archive.readUInt32LE(local) !== 0x04034b50)
      throw corrupt("a bad local header");
    const start = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const packed = archive.subarray(start, start + packedSize);
    if (method !== 0 && method !== 8) throw corrupt(`compression method ${method}`);
    const data =
      method === 8 ? inflateRawSync(packed, { maxOutputLength: Math.max(size, 1) }) : Buffer.from(packed);
    if (data.length !== size || crc32(data) !== crc) throw corrupt(`entry ${name} does not match its CRC`);
    out.push({ name, data });
  }
  return out;
}
