import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import {
  AttributeType,
  BillingMode,
  type ITable,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import { type IKey, Key } from "aws-cdk-lib/aws-kms";
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  ObjectOwnership,
} from "aws-cdk-lib/aws-s3";
import type { Construct, IConstruct } from "constructs";
import { TABLES, type TableDef, type TableId, tableEnvName } from "../../shared/tables.ts";
import { parameterName, publishParameter, readParameter } from "./stack-parameters.ts";

const KEY_ALIAS = "alias/agent-platform";
const SECRETS_KEY_ALIAS = "alias/agent-platform-secrets";

/** The data resources as seen from another stack (imported through this stack's named exports). */
export interface DataRefs {
  key: IKey;
  secretsKey: IKey;
  tables: Record<TableId, ITable>;
  tableNames: Record<TableId, string>;
  bucket: IBucket;
  artifacts: IBucket;
}

/**
 * Stateful resources: every table of shared/tables.ts, the KMS key and the buckets, all retained on delete.
 * Consumers import them by export name (not by CDK's generated exports) so IAM findings have stable names: only
 * values fixed for the resource's life (infra/stacks/exports.test.ts); a table's stream, which may change, by SSM.
 */
/** Every bucket of the platform drops multipart uploads left unfinished this long (a crash between parts). */
export const ABORT_UPLOADS_DAYS = 1;

export class DataStack extends Stack {
  readonly key: Key;
  readonly secretsKey: Key;
  readonly tables: Record<TableId, Table>;
  readonly bucket: Bucket;
  readonly artifactBucket: Bucket;
  readonly logsBucket: Bucket;
  private readonly imported = new WeakMap<IConstruct, DataRefs>();

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    this.key = new Key(this, "Key", {
      alias: KEY_ALIAS,
      description: "Agent platform: tables and buckets (secrets are sealed under the secrets key)",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Exported: a KMS key is never replaced (CloudFormation fails a change of its immutable properties instead).
    this.export("KeyArn", this.key.keyArn);
    // Secrets (deployments', destinations', OAuth and integration tokens) are sealed under a key of their own,
    // which only the roles that seal or unseal may use (grantSecrets); the data key's grants open none of them.
    this.secretsKey = new Key(this, "SecretsKey", {
      alias: SECRETS_KEY_ALIAS,
      description:
        "Agent platform: envelope encryption of secrets, each bound to its workspace by its context",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.export("SecretsKeyArn", this.secretsKey.keyArn); // never replaced, as the data key

    this.tables = Object.fromEntries(Object.values(TABLES).map((def) => [def.id, this.table(def)])) as Record<
      TableId,
      Table
    >;

    // Server access logs cannot be delivered to a KMS-encrypted bucket, so this one uses SSE-S3. (cdk-nag S1
    // accepts it without logging of its own because it is a log target.)
    this.logsBucket = new Bucket(this, "AccessLogs", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          expiration: Duration.days(365),
          noncurrentVersionExpiration: Duration.days(30),
          abortIncompleteMultipartUploadAfter: Duration.days(ABORT_UPLOADS_DAYS),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Bucket keys cut KMS request volume (and cost) for payload-heavy workloads. Versioning protects against
    // mistakes; old payload versions need not live forever.
    this.bucket = this.kmsBucket("Platform", "platform/", { noncurrentDays: 30 });
    // Exported: a retained bucket's generated name changes only by a replacement that would strand its objects.
    this.export("BucketArn", this.bucket.bucketArn);
    this.export("BucketName", this.bucket.bucketName);

    // Revision artifacts (bundled graphs) and build/deploy logs: written by the build, read by deploy and the
    // agent server, deleted with their deployment. Its own bucket so those grants do not reach payloads.
    // Objects are written once per revision; old versions only matter to undo a mistaken delete.
    // A build's exchange objects (builds/: its job with a token and secrets, its result) outlive no build: the
    // task after it deletes them; a build that never finished leaves them to this rule.
    this.artifactBucket = this.kmsBucket("Artifacts", "artifacts/", {
      noncurrentDays: 7,
      expirePrefix: "builds/",
    });
    // Exported, as the platform bucket: its name changes only by a replacement that would strand its objects.
    this.export("ArtifactBucketArn", this.artifactBucket.bucketArn);
    this.export("ArtifactBucketName", this.artifactBucket.bucketName);
  }

  /** A KMS-encrypted (with a bucket key), versioned, private bucket that logs its access under `logPrefix`. */
  private kmsBucket(
    id: string,
    logPrefix: string,
    keep: { noncurrentDays: number; expirePrefix?: string },
  ): Bucket {
    return new Bucket(this, id, {
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: this.logsBucket,
      serverAccessLogsPrefix: logPrefix,
      lifecycleRules: [
        {
          noncurrentVersionExpiration: Duration.days(keep.noncurrentDays),
          abortIncompleteMultipartUploadAfter: Duration.days(ABORT_UPLOADS_DAYS),
        },
        ...(keep.expirePrefix
          ? [
              {
                prefix: keep.expirePrefix,
                expiration: Duration.days(1),
                noncurrentVersionExpiration: Duration.days(1),
              },
            ]
          : []),
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  private table(def: TableDef): Table {
    const table = new Table(this, `Table-${def.id}`, {
      partitionKey: { name: def.partitionKey, type: AttributeType.STRING },
      sortKey: def.sortKey ? { name: def.sortKey, type: AttributeType.STRING } : undefined,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.key,
      timeToLiveAttribute: def.ttlAttribute,
      stream: def.stream ? StreamViewType[def.stream] : undefined,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of def.indexes ?? []) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: index.sortKey ? { name: index.sortKey, type: AttributeType.STRING } : undefined,
        projectionType: index.include ? ProjectionType.INCLUDE : ProjectionType.ALL,
        nonKeyAttributes: index.include ? [...index.include] : undefined,
      });
    }
    // Exported: only a key-schema change replaces a table (its data left in the retained old one); blocking it is wanted.
    this.export(`Table-${def.id}-Arn`, table.tableArn);
    this.export(`Table-${def.id}-Name`, table.tableName);
    // Not an export: an export in use cannot change, so the table could never get another stream.
    if (def.stream) publishParameter(this, `Table-${def.id}-StreamArn`, table.tableStreamArn!);
    return table;
  }

  private exportName(name: string): string {
    return `${this.stackName}:${name}`;
  }

  private export(name: string, value: string): void {
    new CfnOutput(this, name, { value, exportName: this.exportName(name) });
  }

  /** The SSM parameter holding a value that may change (a table's stream, new with each stream it gets). */
  parameterName(name: string): string {
    return parameterName(this, name);
  }

  /** A table's stream ARN in `scope`'s stack, read from its SSM parameter when that stack deploys. */
  streamArnIn(scope: Construct, id: TableId): string {
    return readParameter(scope, this, `Table-${id}-StreamArn`);
  }

  /** The key, tables and bucket imported into `scope`'s stack (once per scope). */
  importInto(scope: Construct): DataRefs {
    const cached = this.imported.get(scope);
    if (cached) return cached;
    const imp = (name: string) => Fn.importValue(this.exportName(name));
    const key = Key.fromKeyArn(scope, "DataKey", imp("KeyArn"));
    const secretsKey = Key.fromKeyArn(scope, "SecretsKey", imp("SecretsKeyArn"));
    const tables = {} as Record<TableId, ITable>;
    const tableNames = {} as Record<TableId, string>;
    for (const def of Object.values(TABLES) as TableDef[]) {
      const id = def.id as TableId;
      tables[id] = Table.fromTableAttributes(scope, `DataTable-${id}`, {
        tableArn: imp(`Table-${id}-Arn`),
        encryptionKey: key,
        globalIndexes: def.indexes?.map((i) => i.name),
      });
      tableNames[id] = imp(`Table-${id}-Name`);
    }
    const bucket = Bucket.fromBucketAttributes(scope, "DataBucket", {
      bucketArn: imp("BucketArn"),
      bucketName: imp("BucketName"),
      encryptionKey: key,
    });
    const artifacts = Bucket.fromBucketAttributes(scope, "DataArtifactBucket", {
      bucketArn: imp("ArtifactBucketArn"),
      bucketName: imp("ArtifactBucketName"),
      encryptionKey: key,
    });
    const refs = { key, secretsKey, tables, tableNames, bucket, artifacts };
    this.imported.set(scope, refs);
    return refs;
  }

  /**
   * The environment every function needs to find the data: TABLE_<ID>, KMS_KEY_ID, SECRETS_KEY_ID,
   * PLATFORM_BUCKET, ARTIFACT_BUCKET.
   */
  functionEnvironment(scope: Construct): Record<string, string> {
    const refs = this.importInto(scope);
    const env: Record<string, string> = {};
    for (const [id, name] of Object.entries(refs.tableNames)) env[tableEnvName(id as TableId)] = name;
    env.KMS_KEY_ID = refs.key.keyArn;
    env.SECRETS_KEY_ID = refs.secretsKey.keyArn;
    env.PLATFORM_BUCKET = refs.bucket.bucketName;
    env.ARTIFACT_BUCKET = refs.artifacts.bucketName;
    return env;
  }
}
