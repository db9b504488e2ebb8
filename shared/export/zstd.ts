import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as zlib from "node:zlib";

// Synchronous Zstandard compression for Parquet pages. Node's own zlib has zstd from 22.15 / 23.8 (the Lambda
// runtime, node22): that is used when present. On older Node (20, this repo's floor) the zstd build that ships
// inside @bokuweb/zstd-wasm is instantiated synchronously here: the package's own init() is async, and the
// Parquet writer compresses a row group inside the synchronous append(). The wasm is loaded only on first use.

export const ZSTD_LEVEL = 3;
/** ZSTD_c_compressionLevel (zstd.h); @types/node 20 does not declare the zstd constants. */
const ZSTD_C_COMPRESSION_LEVEL = 100;

type NativeZstd = (buf: Uint8Array, opts: { params: Record<number, number> }) => Buffer;
const nativeZstd = (zlib as unknown as { zstdCompressSync?: NativeZstd }).zstdCompressSync;

/** Which implementation `zstdCompress` uses on this Node. */
export const zstdBackend: "node:zlib" | "wasm" = nativeZstd ? "node:zlib" : "wasm";

export function zstdCompress(data: Uint8Array, level = ZSTD_LEVEL): Uint8Array {
  if (nativeZstd) return nativeZstd(data, { params: { [ZSTD_C_COMPRESSION_LEVEL]: level } });
  return wasmZstd().compress(data, level);
}

// Just what is used here of the WebAssembly global (this repo's lib settings do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: {
    new (bytes: Uint8Array): object;
    imports(mod: object): { module: string; name: string; kind: string }[];
  };
  Instance: new (
    mod: object,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The (minified) exports of the emscripten build that are used here. */
interface ZstdExports {
  f: WasmMemory;
  g: () => void;
  h: (code: number) => number;
  i: (n: number) => number;
  m: (dst: number, cap: number, src: number, n: number, level: number) => number;
  r: (dst: number, cap: number, src: number, n: number) => number;
  s: (n: number) => number;
  t: (p: number) => void;
}

interface WasmZstd {
  compress(data: Uint8Array, level?: number): Uint8Array;
  decompress(data: Uint8Array, size: number): Uint8Array;
}

let wasm: WasmZstd | undefined;

/**
 * The wasm encoder (exported for tests, which check it even where Node has zstd). The module's import and
 * export names are the minified ones of @bokuweb/zstd-wasm 0.0.27's emscripten build; they are checked
 * before use, and a round trip is run once, so a different build fails loudly here instead of writing bad pages.
 */
export function wasmZstd(): WasmZstd {
  if (wasm) return wasm;
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve("@bokuweb/zstd-wasm")), "zstd.wasm");
  const mod = new WA.Module(readFileSync(file));
  const imports = WA.Module.imports(mod)
    .map((i) => `${i.module}.${i.name}:${i.kind}`)
    .sort()
    .join(",");
  const expected = "a.a:function,a.b:function,a.c:function,a.d:function,a.e:function";
  if (imports !== expected)
    throw new Error(`unexpected @bokuweb/zstd-wasm build (imports ${imports}); expected version 0.0.27`);

  let memory: WasmMemory;
  let heap: Uint8Array;
  const fail = (what: string) => () => {
    throw new Error(`zstd wasm: ${what}`);
  };
  const instance = new WA.Instance(mod, {
    a: {
      a: fail("exit"), // proc_exit
      b: () => {}, // runtime_keepalive_clear
      c: fail("abort"), // abort
      d: () => 0, // setitimer: zstd sets no timers
      // emscripten_resize_heap: grow to the requested size (64 KiB pages), up to 2 GiB.
      e: (requested: number) => {
        const want = requested >>> 0;
        if (want > 2 ** 31) return 0;
        const pages = Math.ceil((want - memory.buffer.byteLength) / 65536);
        try {
          if (pages > 0) memory.grow(pages);
          return 1;
        } catch {
          return 0;
        }
      },
    },
  });
  for (const name of ["f", "g", "h", "i", "m", "r", "s", "t"])
    if (!(name in instance.exports))
      throw new Error(`unexpected @bokuweb/zstd-wasm build (no export ${name})`);
  const ex = instance.exports as unknown as ZstdExports; // the names checked above
  memory = ex.f;
  ex.g(); // static constructors
  const view = () => {
    if (heap?.buffer !== memory.buffer) heap = new Uint8Array(memory.buffer);
    return heap;
  };
  const isError: (code: number) => number = ex.h;
  const bound: (n: number) => number = ex.i;
  const compress: (dst: number, cap: number, src: number, n: number, level: number) => number = ex.m;
  const decompress: (dst: number, cap: number, src: number, n: number) => number = ex.r;
  const malloc: (n: number) => number = ex.s;
  const free: (p: number) => void = ex.t;

  const call = (data: Uint8Array, cap: number, run: (dst: number, src: number) => number) => {
    const src = malloc(Math.max(1, data.length));
    const dst = malloc(Math.max(1, cap));
    if (!src || !dst) throw new Error("zstd wasm: out of memory");
    try {
      view().set(data, src);
      const n = run(dst, src);
      if (isError(n)) throw new Error(`zstd wasm: error ${n}`);
      return view().slice(dst, dst + (n >>> 0));
    } finally {
      free(src);
      free(dst);
    }
  };
  const candidate: WasmZstd = {
    compress: (data, level = ZSTD_LEVEL) =>
      call(data, bound(data.length) >>> 0, (dst, src) =>
        compress(dst, bound(data.length), src, data.length, level),
      ),
    decompress: (data, size) => call(data, size, (dst, src) => decompress(dst, size, src, data.length)),
  };
  const probe = new TextEncoder().encode("parquet zstd probe ".repeat(64));
  const back = candidate.decompress(candidate.compress(probe), probe.length);
  if (back.length !== probe.length || !back.every((b, i) => b === probe[i]))
    throw new Error("unexpected @bokuweb/zstd-wasm build (round trip failed)");
  wasm = candidate;
  return wasm;
}
