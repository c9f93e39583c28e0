/**
 * cdk-nag's AwsSolutions rules over ServiceStack. cdk-nag 3 is a policy validation plugin (no longer
 * an Aspect writing annotations): `validateScope` runs the rules on the construct tree and returns
 * what is not acknowledged. A finding is either fixed in the stack or acknowledged with
 * `Validations.of(construct).acknowledge({ id, reason })` on the narrowest construct, with a reason.
 */
import { type Stack, Validations } from 'aws-cdk-lib';

import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { wholeTemplate } from '#test/support/whole-template.ts';

interface Violation {
  ruleName: string;
  description: string;
  severity?: string;
  violatingResources: { constructPath: string }[];
}

/** The stack as deployed, optional parts included (tenant domains, the alarm e-mail), synthesized without esbuild. */
function synthesizedStack(): ServiceStack {
  const app = testApp({ alarmEmail: 'ops@example.com' });
  const stack = new ServiceStack(app, 'Nag', {
    stage: 'prod',
    tenantBaseDomain: 'bi.example.com',
    tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
  });
  // Synthesis runs the aspects and resolves what is lazy, so the rules see the final resources.
  app.synth();
  return stack;
}

const describeViolations = (violations: readonly Violation[]) =>
  violations
    .map(
      (violation) =>
        `${violation.ruleName}: ${violation.description}\n${violation.violatingResources.map((resource) => `    at ${resource.constructPath}`).join('\n')}`,
    )
    .join('\n');

/** Every acknowledgment recorded on the stack's constructs: where, which rule, why. */
function acknowledgments(stack: Stack): { path: string; id: string; reason: unknown }[] {
  return stack.node.findAll().flatMap((construct: IConstruct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, unknown>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  const stack = synthesizedStack();
  const violations = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack).violations as Violation[];

  it('reports no error that is neither fixed nor acknowledged', () => {
    const errors = violations.filter((violation) => violation.severity === 'error');
    if (errors.length) console.error(`cdk-nag errors:\n${describeViolations(errors)}`);
    expect(errors.map((error) => error.ruleName)).toEqual([]);
  });

  it('reports no warning either', () => {
    const warnings = violations.filter((violation) => violation.severity !== 'error');
    if (warnings.length) console.warn(`cdk-nag warnings:\n${describeViolations(warnings)}`);
    expect(warnings.map((warning) => warning.ruleName)).toEqual([]);
  });

  it('grants * only for X-Ray, the one acknowledged wildcard resource of the execution roles', () => {
    type Document = { Statement: { Action: string | string[]; Resource: unknown }[] };
    const template = wholeTemplate(stack);
    // Standalone and managed policies, and the policies written inside roles.
    const documents = [
      ...['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'].flatMap((type) =>
        Object.values(template.findResources(type)).map(
          (policy) => (policy as { Properties: { PolicyDocument: Document } }).Properties.PolicyDocument,
        ),
      ),
      ...Object.values(template.findResources('AWS::IAM::Role')).flatMap(
        (role) =>
          (role as { Properties: { Policies?: { PolicyDocument: Document }[] } }).Properties.Policies?.map(
            (policy) => policy.PolicyDocument,
          ) ?? [],
      ),
    ];
    const statements = documents.flatMap((document) => document.Statement);
    const onEverything = statements.filter((statement) => [statement.Resource].flat().includes('*'));
    expect(onEverything.length).toBeGreaterThan(0);
    for (const statement of onEverything)
      expect([statement.Action].flat().sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  it('acknowledges findings only on the resources they concern, each with a specific reason', () => {
    const all = acknowledgments(stack);
    expect(all.length).toBeGreaterThan(0);
    for (const { path, id, reason } of all) {
      expect(id, path).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expect(typeof reason, `${path} ${id}`).toBe('string');
      expect((reason as string).trim().length, `reason of ${id} at ${path}`).toBeGreaterThanOrEqual(20);
      // Never for the whole stack: a stack-wide acknowledgment would also hide the next resource's finding.
      expect(path, id).not.toBe(stack.node.path);
    }
  });
});
