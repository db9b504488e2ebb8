import { crc32, deflateRawSync } from "node:zlib";

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
