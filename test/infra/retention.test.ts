/**
 * Storage that stays bounded: the table's TTL attribute is the one every expiring record is written
 * with, and the retentions of runs, deliveries and audit records reach every function that writes the table, from
 * context, checked at synth; the payload bucket keeps a delivery's body a day longer than its record.
 */
import { type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { retentionSettingLimits, retentionSettingVariables } from '#functions/core/store/retention.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';
import { wholeTemplate } from '#test/support/whole-template.ts';

type Resource<P> = { Properties: P };
type LambdaFunction = Resource<{ Environment?: { Variables?: Record<string, unknown> } }>;

const synthesize = (context: Record<string, unknown> = {}) =>
  wholeTemplate(new ServiceStack(testApp(context), 'Test', { stage: 'test', tenantBaseDomain: 'bi.example.com' }));

/** The retention variables of every function that knows the table, as `runs,deliveries,audit`. */
const retentionsOf = (template: Template) =>
  new Set(
    Object.values(template.findResources('AWS::Lambda::Function') as Record<string, LambdaFunction>)
      .map((fn) => fn.Properties.Environment?.Variables ?? {})
      .filter((variables) => variables.TABLE_NAME !== undefined)
      .map((variables) =>
        [
          variables[retentionSettingVariables.runRetentionDays],
          variables[retentionSettingVariables.deliveryRetentionDays],
          variables[retentionSettingVariables.auditRetentionDays],
        ].join(),
      ),
  );
const payloadExpiryOf = (template: Template) =>
  (
    Object.values(template.findResources('AWS::S3::Bucket'))[0] as Resource<{
      LifecycleConfiguration: { Rules: { ExpirationInDays?: number }[] };
    }>
  ).Properties.LifecycleConfiguration.Rules[0]?.ExpirationInDays;

describe('retention', () => {
  it('expires items on the expiresAt attribute, the one runs, deliveries and every other expiring record are written with', () => {
    expect(tableDefinition.timeToLiveAttribute).toBe('expiresAt');
    synthesize().hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('tells every function that writes the table how long runs, deliveries and audit records are kept: 90, 30 and 400 days by default', () => {
    const template = synthesize();
    const { runRetentionDays, deliveryRetentionDays, auditRetentionDays } = retentionSettingLimits;
    expect([runRetentionDays.fallback, deliveryRetentionDays.fallback, auditRetentionDays.fallback]).toEqual([90, 30, 400]);
    expect(retentionsOf(template)).toEqual(new Set(['90,30,400']));
    expect(payloadExpiryOf(template)).toBe(31);
  });

  it('takes the retentions from context (runRetentionDays, deliveryRetentionDays, auditRetentionDays), the bucket following the deliveries', () => {
    const template = synthesize({ runRetentionDays: '400', deliveryRetentionDays: 60, auditRetentionDays: 1000 });
    expect(retentionsOf(template)).toEqual(new Set(['400,60,1000']));
    expect(payloadExpiryOf(template)).toBe(61);
  });

  it('refuses a retention shorter than a week (records still being worked on would expire) or not a whole number of days', () => {
    for (const [name, value] of [
      ['runRetentionDays', '6'],
      ['deliveryRetentionDays', '0'],
      ['runRetentionDays', '30.5'],
      ['deliveryRetentionDays', '3651'],
    ] as const)
      expect(() => synthesize({ [name]: value }), `${name}=${value}`).toThrow(
        new RegExp(`Context ${name} must be a whole number from 7 to 3650`),
      );
    // Audit records at least a month: last month's changes stay there to look into.
    expect(() => synthesize({ auditRetentionDays: '29' })).toThrow(
      /Context auditRetentionDays must be a whole number from 30 to 3650/,
    );
  });
});
