import { gzipSync } from "node:zlib";
import snappy from "snappyjs";
import { zstdCompress } from "../zstd.ts";

// Page compression: the codecs an export may choose, their ids in the file metadata (parquet.thrift
// CompressionCodec), and compressing one page with each.

export type Compression = "none" | "gzip" | "snappy" | "zstandard";

/** Thrift CompressionCodec of each compression. */
export const CODEC: Record<Compression, number> = { none: 0, snappy: 1, gzip: 2, zstandard: 6 };
export const GZIP_LEVEL = 6;

export function compress(c: Compression, page: Uint8Array): Uint8Array {
  switch (c) {
    case "none":
      return page;
    case "gzip":
      return gzipSync(page, { level: GZIP_LEVEL });
    case "snappy":
      return snappy.compress(page);
    case "zstandard":
      return zstdCompress(page);
  }
}
