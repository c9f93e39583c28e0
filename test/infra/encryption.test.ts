/**
 * Secrets at rest: the table is encrypted under a customer managed key that rotates and outlives the
 * stack, and functions may use that key only through DynamoDB, with the actions their table access needs.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableActions, tableKeyActions } from '#lib/function-roles.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

const asArray = (value: string | string[]) => (Array.isArray(value) ? value : [value]);

describe('the table key', () => {
  let template: Template;
  let keyId: string;
  beforeAll(() => {
    const stack = new ServiceStack(testApp(), 'Test', {
      stage: 'test',
      tenantBaseDomain: 'bi.example.com',
      env: { account: '123456789012', region: 'eu-west-1' },
    });
    template = Template.fromStack(stack);
    const keys = Object.entries(template.findResources('AWS::KMS::Key') as Record<string, Resource>).filter(([, key]) =>
      String(key.Properties.Description).startsWith('Encrypts the table'),
    );
    expect(keys).toHaveLength(1);
    keyId = keys[0]?.[0] ?? '';
  });

  it('encrypts the table with a rotating customer managed key that is kept when the stack goes', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } },
    });
    const key = (template.findResources('AWS::KMS::Key') as Record<string, Resource>)[keyId];
    expect(key?.Properties.EnableKeyRotation).toBe(true);
    expect(key?.DeletionPolicy).toBe('Retain');
    // What a point-in-time restore names (docs/operations.md).
    template.hasOutput('TableKeyArn', { Value: { 'Fn::GetAtt': [keyId, 'Arn'] } });
  });

  it('lets each table reader and writer use the key only through DynamoDB, with what its access needs', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>);
    const keyStatements = policies.flatMap((policy) =>
      ((policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement ?? []).filter((statement) =>
        asArray(statement.Action).some((action) => action.startsWith('kms:')),
      ),
    );
    const tableStatements = policies.flatMap((policy) =>
      ((policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement ?? []).filter((statement) =>
        asArray(statement.Action).includes('dynamodb:GetItem'),
      ),
    );
    expect(keyStatements.length).toBe(tableStatements.length);
    for (const statement of keyStatements) {
      expect(statement.Resource).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(statement.Condition).toEqual({ StringEquals: { 'kms:ViaService': 'dynamodb.eu-west-1.amazonaws.com' } });
      expect([tableKeyActions.read, tableKeyActions.readWrite]).toContainEqual(asArray(statement.Action));
    }
    // A writer's key actions go with a writer's table actions.
    const writers = tableStatements.filter((statement) => asArray(statement.Action).includes('dynamodb:PutItem'));
    expect(writers.length).toBeGreaterThan(0);
    expect(keyStatements.filter((statement) => asArray(statement.Action).includes('kms:Encrypt'))).toHaveLength(writers.length);
    expect(tableActions.readWrite).toContain('dynamodb:PutItem');
  });
});
