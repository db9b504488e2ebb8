import { type ExportField, FIELD_KINDS } from "../../records/export-fields.ts";

// How each export field is stored in Parquet: its schema node and its (single) leaf column. v1 keeps to types
// every engine reads (strings, JSON text, lists as JSON text, TIMESTAMP(MICROS) not adjusted to UTC);
// v2_beta adds UTC-adjusted timestamps, LIST<STRING> and JSON.

export type FormatVersion = "v1" | "v2_beta";

export type PhysicalType = "BOOLEAN" | "INT64" | "DOUBLE" | "BYTE_ARRAY";
export type LogicalType =
  | { type: "STRING" }
  | { type: "JSON" }
  | { type: "LIST" }
  | { type: "TIMESTAMP"; unit: "MICROS"; isAdjustedToUTC: boolean };
export type ConvertedType = "UTF8" | "JSON" | "LIST" | "TIMESTAMP_MICROS";
export type Repetition = "REQUIRED" | "OPTIONAL" | "REPEATED";

/** One node of the Parquet schema: a leaf (physicalType set) or a group (children set). */
export interface SchemaNode {
  name: string;
  repetition: Repetition;
  physicalType?: PhysicalType;
  logicalType?: LogicalType;
  convertedType?: ConvertedType;
  children?: SchemaNode[];
}

/** How one export field is stored: its schema node and its (single) leaf column. */
export interface ParquetColumn {
  field: ExportField;
  kind: (typeof FIELD_KINDS)[ExportField];
  schema: SchemaNode;
  /** Path of the leaf column in the schema (["tags", "list", "element"] for a v2_beta list). */
  path: string[];
  physicalType: PhysicalType;
  maxDefinitionLevel: number;
  maxRepetitionLevel: number;
}

const STRING: LogicalType = { type: "STRING" };

/** The Parquet column of each field, in the order given. All columns are optional (nullable). */
export function parquetColumns(
  fields: readonly ExportField[],
  formatVersion: FormatVersion,
): ParquetColumn[] {
  const v2 = formatVersion === "v2_beta";
  return fields.map((field): ParquetColumn => {
    const kind = FIELD_KINDS[field];
    const leaf = (physicalType: PhysicalType, extra: Partial<SchemaNode> = {}): ParquetColumn => ({
      field,
      kind,
      schema: { name: field, repetition: "OPTIONAL", physicalType, ...extra },
      path: [field],
      physicalType,
      maxDefinitionLevel: 1,
      maxRepetitionLevel: 0,
    });
    switch (kind) {
      case "string":
        return leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
      case "json":
        return v2
          ? leaf("BYTE_ARRAY", { logicalType: { type: "JSON" }, convertedType: "JSON" })
          : leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
      case "list":
        if (!v2) return leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
        // The standard three-level list: optional group (LIST) { repeated group list { optional element } }.
        return {
          field,
          kind,
          schema: {
            name: field,
            repetition: "OPTIONAL",
            logicalType: { type: "LIST" },
            convertedType: "LIST",
            children: [
              {
                name: "list",
                repetition: "REPEATED",
                children: [
                  {
                    name: "element",
                    repetition: "OPTIONAL",
                    physicalType: "BYTE_ARRAY",
                    logicalType: STRING,
                    convertedType: "UTF8",
                  },
                ],
              },
            ],
          },
          path: [field, "list", "element"],
          physicalType: "BYTE_ARRAY",
          maxDefinitionLevel: 3,
          maxRepetitionLevel: 1,
        };
      case "timestamp":
        // Microseconds, never nanos (Spark and Glue reject nanos). The legacy TIMESTAMP_MICROS annotation is
        // kept beside the logical type so readers that only know converted types (parquet-mr < 1.11) still
        // see a timestamp; Arrow writes naive timestamps the same way.
        return leaf("INT64", {
          logicalType: { type: "TIMESTAMP", unit: "MICROS", isAdjustedToUTC: v2 },
          convertedType: "TIMESTAMP_MICROS",
        });
      case "int":
        return leaf("INT64");
      case "float":
        return leaf("DOUBLE");
      case "bool":
        return leaf("BOOLEAN");
      default:
        throw new Error(`no Parquet type for field ${field}`);
    }
  });
}
