/**
 * Deploys that cannot half-fail: what lib/stage.ts lets through to a synth, and what it stops with a
 * message naming every problem. The committed cdk.json must synthesize as it is.
 */
import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { serviceStacks } from '#lib/service-app.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { edgeRequiredSettings, productionSettings, stageOf } from '#lib/stage.ts';
import { testApp } from '../support/cdk-app.ts';
import { wholeTemplate } from '#test/support/whole-template.ts';

const production = {
  account: '123456789012',
  region: 'eu-west-1',
  alarmEmail: 'ops@example.com',
  tenantCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-aaaa-bbbb-cccc-123456789abc',
  edgeCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/1a2b3c4d-aaaa-bbbb-cccc-123456789abc',
  tenantBaseDomain: 'bi.example.com',
  frontEnd: 'none',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/KeyAdmin',
};

const stageFrom = (context: Record<string, unknown>, defaults = {}) => stageOf(testApp(context), defaults);
const problemOf = (context: Record<string, unknown>, defaults = {}): string => {
  try {
    stageFrom(context, defaults);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the stage to be refused');
};

describe('stages', () => {
  it('synthesizes the committed cdk.json as it is: dev is ephemeral and needs nothing else', () => {
    const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };
    const stage = stageFrom(context, { account: '111111111111', region: 'us-west-2' });
    expect(stage).toMatchObject({ name: 'dev', ephemeral: true, env: { account: '111111111111', region: 'us-west-2' } });
  });

  it('synthesizes the production stage docs/operations.md shows (with certificate ids filled in), the edge on', () => {
    const example = /```json\n([\s\S]*?)```/.exec(readFileSync('docs/operations.md', 'utf8'))?.[1] ?? '';
    const { context } = JSON.parse(example.replaceAll('certificate/<id>', 'certificate/0f1e2d3c')) as {
      context: Record<string, unknown>;
    };
    expect(stageFrom({ ...context, stage: 'prod' })).toMatchObject({ name: 'prod', ephemeral: false, edge: true });
    // And its stacks, as bin/app.ts makes them: its front end, its limits and its buckets pass every check.
    const app = testApp({ ...context, stage: 'prod' });
    const stacks = serviceStacks(app, stageOf(app));
    expect(stacks.edge?.stackName).toBe('BiTenantAdmin-prod-edge');
    Template.fromStack(stacks.edge as NonNullable<typeof stacks.edge>).resourceCountIs('AWS::WAFv2::WebACL', 1);
  });

  it('refuses a production stage that lacks any of what it needs, naming every one missing', () => {
    for (const missing of [
      ...productionSettings,
      ...edgeRequiredSettings.filter((setting) => setting !== 'tenantCertificateArn'),
    ]) {
      const settings: Record<string, unknown> = { ...production };
      delete settings[missing];
      const message = problemOf({ stage: 'prod', stages: { prod: settings } });
      expect(message).toContain(`missing: ${missing}.`);
      expect(message).toContain('"ephemeral": true');
    }
    expect(problemOf({ stage: 'staging' })).toContain(
      `missing: ${[...new Set([...productionSettings, ...edgeRequiredSettings])].join(', ')}.`,
    );
  });

  it('binds a production stage to its own account and region, never the shell credentials', () => {
    const stage = stageFrom({ stage: 'prod', stages: { prod: production } }, { account: '999999999999', region: 'us-east-1' });
    expect(stage).toMatchObject({ ephemeral: false, env: { account: production.account, region: production.region } });
  });

  it('gives the stack the settings of the stage from cdk.json, and -c name=value overrides one of them', () => {
    const context = { stage: 'prod', stages: { prod: { ...production, apiRateLimit: 50 } }, alarmEmail: 'pager@example.com' };
    const app = testApp(context);
    const stage = stageOf(app);
    const template = wholeTemplate(
      new ServiceStack(app, 'Prod', { stage: stage.name, tenantBaseDomain: stage.tenantBaseDomain, env: stage.env }),
    );
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 50 } });
    template.hasResourceProperties('AWS::SNS::Subscription', { Endpoint: 'pager@example.com' });
    template.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: true });
  });

  it('refuses a certificate of another region or account, as the deploy would halfway through', () => {
    expect(
      problemOf({
        stage: 'prod',
        stages: { prod: { ...production, tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' } },
      }),
    ).toMatch(/certificate of us-east-1, but the stack deploys to eu-west-1/);
    expect(
      problemOf({
        stage: 'prod',
        stages: { prod: { ...production, tenantCertificateArn: 'arn:aws:acm:eu-west-1:210987654321:certificate/abc' } },
      }),
    ).toMatch(/belongs to account 210987654321/);
    expect(problemOf({ stage: 'prod', stages: { prod: { ...production, tenantCertificateArn: 'not-an-arn' } } })).toMatch(
      /must be an ACM certificate ARN/,
    );
    // The stack checks too, for a stack built without bin/app.ts.
    expect(
      () =>
        new ServiceStack(testApp(), 'Direct', {
          stage: 'test',
          tenantBaseDomain: 'bi.example.com',
          tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
          env: { account: '123456789012', region: 'eu-west-1' },
        }),
    ).toThrow(/certificate of us-east-1/);
  });

  it('checks the shape of every setting, listing all problems at once', () => {
    const message = problemOf({
      stage: 'prod',
      stages: { prod: { ...production, account: '12345', region: 'Europe', tenantBaseDomain: 'not a domain' } },
    });
    expect(message).toContain('12-digit AWS account id');
    expect(message).toContain('AWS region such as eu-west-1');
    expect(message).toContain('DNS name');
    expect(problemOf({ stage: 'Prod!' })).toMatch(/lower-case letters/);
    expect(problemOf({ stage: 'dev', stages: { dev: { ephemeral: 'maybe' } } })).toMatch(/ephemeral must be true or false/);
    expect(problemOf({ stage: 'dev', stages: ['dev'] })).toMatch(/stages must be an object/);
  });
});
