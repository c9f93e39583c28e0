import { type Stack, Validations } from 'aws-cdk-lib';
import type { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { tokenUseGrants } from '#functions/core/auth/token-use.ts';
import type { QueueName } from '#functions/core/store/queue-definitions.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import type { TableAccess } from '#functions/routes.ts';
import { pascalCase } from './construct-ids.ts';
import type { PayloadAccess, PayloadBucket } from './payload-bucket.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';
import type { SigningKeys } from './signing-keys.ts';
import type { TokenKeys } from './token-keys.ts';

/**
 * The DynamoDB actions behind each level of table access: exactly what the code calls, nothing
 * more (grantReadData would add Scan, which could read every tenant's rows). Transactions are
 * authorized per item action, so TransactWriteItems needs no action of its own.
 */
export const tableActions: Record<TableAccess, string[]> = {
  none: [],
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:ConditionCheckItem',
  ],
};

/**
 * The one write a function that only reads the table still makes: the stamps of its bearer token's
 * use (functions/core/auth/token-use.ts), at most once a minute per token. Each an UpdateItem naming
 * only its stamp's attributes (keys included: fine-grained access counts every attribute a request
 * names, its conditions' too) in its stamp's partitions (`dynamodb:LeadingKeys`), answering nothing:
 * it can change when a token was last used, never who owns a token, which token an owner has, or
 * anything else. (`Null` false: the lists must be there, since ForAllValues over no list would hold.)
 * An UpdateItem can make an item the code's conditions would not: the partitions keep one to a token
 * item holding only a `lastUsedAt` (which authenticates nobody), or an item of a client's or tenant's
 * holding only `tokensLastUsedAt`.
 */
export const tokenUseStatements = (tableArn: string) =>
  Object.entries(tokenUseGrants).map(
    ([stamp, { attributes, partitions }]) =>
      new PolicyStatement({
        sid: `TokenUseStampsOn${pascalCase(stamp)}`,
        actions: ['dynamodb:UpdateItem'],
        resources: [tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions.map((prefix) => `${prefix}*`) },
          Null: { 'dynamodb:Attributes': 'false', 'dynamodb:LeadingKeys': 'false' },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
  );

/**
 * What DynamoDB does with the table's key on a caller's behalf: every reader has the table key
 * decrypted, a writer may also have data keys made. Granted in the key's policy, only through DynamoDB (kms:ViaService).
 */
export const tableKeyActions: Record<TableAccess, string[]> = {
  none: [],
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  readWrite: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:ReEncryptFrom', 'kms:ReEncryptTo'],
};

/**
 * The S3 actions behind each level of payload access: what functions/core/store/payloads.ts calls.
 * ListBucket (on the bucket, not its objects) is what makes S3 answer NoSuchKey for a body that is
 * gone (delivered or expired), which the code expects, rather than AccessDenied.
 */
export const payloadActions: Record<PayloadAccess, { objects: string[]; bucket: string[] }> = {
  read: { objects: ['s3:GetObject'], bucket: ['s3:ListBucket'] },
  readWrite: { objects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], bucket: ['s3:ListBucket'] },
};

/** What a function may do; functions with the same permissions share one execution role. */
export interface Permissions {
  table: TableAccess;
  sends: readonly QueueName[];
  /** The queue a consumer reads (its event source mapping grants that). */
  consumes?: QueueName;
  deadLetters?: QueueName;
  signingKeys?: boolean;
  /** Checks or mints bearer tokens (the token MAC keys, lib/token-keys.ts). */
  tokenKeys?: boolean;
  payloads?: PayloadAccess;
}

/** A readable, stable name for a set of permissions (`read`, `readWrite sends reload`, …). */
function permissionsKey(needs: Permissions): string {
  return [
    needs.table,
    ...(needs.sends.length ? [`sends ${[...needs.sends].sort().join(' ')}`] : []),
    ...(needs.consumes ? [`consumes ${needs.consumes}`] : []),
    ...(needs.deadLetters ? [`dead-letters ${needs.deadLetters}`] : []),
    ...(needs.signingKeys ? ['signing keys'] : []),
    ...(needs.tokenKeys ? ['token keys'] : []),
    ...(needs.payloads ? [`payloads ${needs.payloads}`] : []),
  ].join(' ');
}

/** What the roles grant access to. */
export interface FunctionRolesProps {
  table: ServiceTable;
  queues: ServiceQueues;
  payloads: PayloadBucket;
  signingKeys: SigningKeys;
  tokenKeys: TokenKeys;
}

/**
 * The functions' execution roles: one per set of permissions, shared by the functions that need
 * exactly that set. Each function still has only what it needs, and the stack stays well under
 * CloudFormation's 500 resources (a role and a policy per function would not).
 */
export class FunctionRoles {
  private readonly roles = new Map<string, Role>();

  constructor(
    private readonly stack: Stack,
    private readonly props: FunctionRolesProps,
  ) {}

  /** The role with exactly these permissions, made on first use. */
  roleFor(needs: Permissions): Role {
    const key = permissionsKey(needs);
    const existing = this.roles.get(key);
    if (existing) return existing;
    const { table, queues, payloads, signingKeys, tokenKeys } = this.props;
    const role = new Role(this.stack, `Role${pascalCase(key)}`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Functions that need: ${key}`,
    });
    // Instead of AWSLambdaBasicExecutionRole, which may write (and create) every log group of the account, each
    // function's nested stack lets the role write that function's log group (lib/function-stacks.ts).
    if (needs.table !== 'none') {
      table.table.grant(role, ...tableActions[needs.table]);
      // In the key's policy, not the role's: the key policy does not let IAM policies grant its use (service-table.ts).
      // The role's policy names the table, which names the key, so CloudFormation puts the key's policy first: in the
      // deploy that moved the grant here (the key's old policy let the role's grant it), no function was without it.
      // A role that reads and stamps its tokens' use (tokenUseStatements) writes items too: the writers' key actions.
      const keyAccess = needs.table === 'read' && needs.tokenKeys ? 'readWrite' : needs.table;
      table.allowUseThroughDynamoDB(`Functions${pascalCase(keyAccess)}ThroughDynamoDB`, role, tableKeyActions[keyAccess]);
    }
    // A read-write role updates any attribute already; a read-only one that checks tokens gets the stamps alone.
    if (needs.tokenKeys && needs.table === 'read')
      for (const statement of tokenUseStatements(table.table.tableArn)) role.addToPolicy(statement);
    for (const name of needs.sends) queues.queues[name].grantSendMessages(role);
    if (needs.deadLetters) queues.deadLetterQueues[needs.deadLetters].grantSendMessages(role);
    if (needs.signingKeys) signingKeys.secret.grantRead(role);
    if (needs.tokenKeys) tokenKeys.secret.grantRead(role);
    // Named actions rather than grantRead/grantPut/grantDelete, which add wildcards (s3:GetObject*,
    // s3:List*, s3:Abort*, …). readWrite also deletes: a delivered body is removed at once.
    if (needs.payloads) {
      const actions = payloadActions[needs.payloads];
      role.addToPolicy(new PolicyStatement({ actions: actions.objects, resources: [payloads.bucket.arnForObjects('*')] }));
      role.addToPolicy(new PolicyStatement({ actions: actions.bucket, resources: [payloads.bucket.bucketArn] }));
    }
    this.acknowledgeFindings(role, needs);
    this.roles.set(key, role);
    return role;
  }

  /** The cdk-nag findings every execution role has by design, acknowledged on that role only. */
  private acknowledgeFindings(role: Role, needs: Permissions): void {
    const acknowledge = (id: string, reason: string) => Validations.of(role).acknowledge({ id, reason });
    const logicalIdOf = (resource: CfnTable | CfnBucket) => this.stack.resolve(resource.logicalId) as string;
    acknowledge(
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray tracing (Tracing.ACTIVE on every function) needs xray:PutTraceSegments and xray:PutTelemetryRecords, ' +
        'which support no resource-level permissions, so their resource is *; test/infra/nag.test.ts checks that no ' +
        'other statement of a role uses *.',
    );
    if (needs.table !== 'none')
      acknowledge(
        `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.props.table.table.node.defaultChild as CfnTable)}.Arn>/index/*]`,
        `The wildcard covers only the indexes of the service's table (${tableDefinition.globalIndexes.map((index) => index.indexName).join(', ')}), ` +
          'with the same named actions as the table itself; Query on an index needs the index ARN.',
      );
    if (needs.payloads)
      acknowledge(
        `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.props.payloads.bucket.node.defaultChild as CfnBucket)}.Arn>/*]`,
        'Object keys in the payload bucket are made per delivery at run time (deliveries/<tenant>/<delivery>.json), so ' +
          'the object actions (named, no wildcard) apply to the objects of this one bucket.',
      );
  }
}
