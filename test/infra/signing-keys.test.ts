/**
 * The login-token keyring in the service's template: a custom resource puts the first key in at
 * deploy, through a function whose role may read and write that one secret and nothing else, and the
 * secret outlives its stack in a production stage (not in an ephemeral one).
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { synthesizeProduction } from '#test/support/stages.ts';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const resourcesOf = (template: Template) => template.toJSON().Resources as Record<string, Resource>;

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

/** The keyring secret's logical id. */
const keyringSecretOf = (template: Template): string =>
  single(
    Object.entries(resourcesOf(template))
      .filter(([id, resource]) => id.startsWith('SigningKeys') && resource.Type === 'AWS::SecretsManager::Secret')
      .map(([id]) => id),
    'signing keys secret',
  );

describe('the first signing key', () => {
  const { service } = synthesizeProduction();
  const resources = resourcesOf(service);
  const [, firstKey] = single(
    Object.entries(resources).filter(([, resource]) => resource.Type === 'Custom::FirstSigningKey'),
    'first signing key custom resource',
  );
  const functionId = (firstKey.Properties.ServiceToken as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const fn = resources[functionId];

  it('is made by a custom resource of the service stack, for the keyring secret', () => {
    const secretId = keyringSecretOf(service);
    expect(firstKey.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [functionId, 'Arn'] },
      SecretArn: { Ref: secretId },
    });
    expect(fn?.Type).toBe('AWS::Lambda::Function');
    // The function finds the keyring where every function of the service does.
    expect(fn?.Properties.Environment).toMatchObject({ Variables: { SIGNING_KEYS_SECRET_ARN: { Ref: secretId } } });
    expect(fn?.Properties.Handler).toBe('index.handler');
  });

  it('runs with a role that may read and write that secret, write its own log, trace, and nothing else', () => {
    const secretId = keyringSecretOf(service);
    const roleId = (fn?.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = resources[roleId];
    expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role?.Properties.Policies).toBeUndefined();
    const policies = Object.values(resources).filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' && JSON.stringify(resource.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    );
    const statements = policies.flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const logGroupId = (fn?.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    const actions = (statement: Statement) => [statement.Action].flat().sort();
    expect(statements.map((statement) => ({ ...statement, Action: actions(statement) }))).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'],
          Resource: { Ref: secretId },
        },
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
        },
        { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' },
      ]),
    );
    expect(statements).toHaveLength(3);
    // No other policy in the template names the role.
    const naming = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::IAM::Policy' && JSON.stringify(resource.Properties.Roles).includes(roleId),
    );
    expect(naming).toHaveLength(policies.length);
  });
});

describe('the signing keys secret', () => {
  it('outlives the stack of a production stage', () => {
    const { service } = synthesizeProduction();
    expect(resourcesOf(service)[keyringSecretOf(service)]).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('goes with the stack of an ephemeral stage', () => {
    const { service } = synthesizeProduction({ ephemeral: true });
    expect(resourcesOf(service)[keyringSecretOf(service)]).toMatchObject({
      DeletionPolicy: 'Delete',
      UpdateReplacePolicy: 'Delete',
    });
  });
});
