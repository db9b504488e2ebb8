// snappyjs ships no types; the one function the Parquet writer uses.
declare module "snappyjs" {
  const snappy: { compress(input: Uint8Array): Uint8Array; uncompress(input: Uint8Array): Uint8Array };
  export default snappy;
}
