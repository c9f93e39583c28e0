import { Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/**
 * A stage is one whole deployment. Its settings live in cdk.json under `stages.<stage>` (kept in
 * version control, so a deploy cannot drop one by forgetting a `-c`); `-c name=value` overrides a
 * value for one command. A stage is production unless declared `ephemeral: true`: production
 * stages are bound to an account and region, keep the table's deletion protection on, and refuse
 * to synthesize without what a working production deployment needs.
 */
export function stageName(scope: Construct): string {
  const stage = String(scope.node.tryGetContext('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage))
    throw new Error(`Context stage must be lower-case letters, digits and -, not "${stage}"`);
  return stage;
}

/** A setting of the current stage: `-c name=value` first, then `stages.<stage>.name` in cdk.json. */
export function stageContext(scope: Construct, name: string): unknown {
  const given = scope.node.tryGetContext(name) as unknown;
  if (given !== undefined && given !== '') return given;
  const stages = scope.node.tryGetContext('stages') as unknown;
  if (stages === undefined) return undefined;
  if (typeof stages !== 'object' || stages === null || Array.isArray(stages))
    throw new Error('Context stages must be an object of stage names to their settings');
  const declared = (stages as Record<string, unknown>)[stageName(scope)];
  if (declared === undefined) return undefined;
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared))
    throw new Error(`Context stages.${stageName(scope)} must be an object of settings`);
  return (declared as Record<string, unknown>)[name];
}

/** What a production stage cannot go without: where it lives, who hears its alarms, where logins land. */
export const productionSettings = ['account', 'region', 'alarmEmail', 'tenantCertificateArn'] as const;
/**
 * What a stage with the edge on (CloudFront and WAF in front, docs/operations.md, API throttling) needs
 * besides: the edge's certificate, the regional tenant domain that is the distributions' origin, and who
 * serves the tenant domains' other paths (lib/edge-settings.ts `FrontEnd`: no default is safe).
 */
export const edgeRequiredSettings = ['tenantCertificateArn', 'edgeCertificateArn', 'frontEnd'] as const;
/** CloudFront takes certificates of this region only, and WAF's CLOUDFRONT web ACLs live there. */
export const EDGE_REGION = 'us-east-1';

export interface Stage {
  name: string;
  /** A throwaway deployment: nothing required, and the table may be deleted with the stack. */
  ephemeral: boolean;
  /** Where the stack deploys: the stage's own for production, else the CLI's credentials' (CDK_DEFAULT_*). */
  env: { account?: string; region?: string };
  tenantBaseDomain: string;
  tenantCertificateArn?: string;
  /**
   * CloudFront and a WAF web ACL in front of the API (lib/edge-stack.ts):
   * on by default for a production stage, off for an ephemeral one (`edge` setting).
   */
  edge: boolean;
  /** ACM certificate of `*.<tenantBaseDomain>` in us-east-1, for the distribution; required with the edge on. */
  edgeCertificateArn?: string;
}

/** An AWS account id, and a region's name (shared with the release pipeline's settings). */
export const accountPattern = /^\d{12}$/;
export const regionPattern = /^[a-z]{2}(-[a-z]+)+-\d$/;
const certificateArnPattern = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):(\d{12}):certificate\/[A-Za-z0-9-]+$/;

/**
 * Reads and checks the stage, failing the synth with every problem at once rather than deploying a
 * stage to whichever account the shell's credentials name, without alarms, or without tenant domains.
 */
export function stageOf(scope: Construct, defaults: { account?: string; region?: string } = {}): Stage {
  const name = stageName(scope);
  const text = (setting: string): string | undefined => {
    const value = stageContext(scope, setting);
    if (value === undefined || value === '') return undefined;
    return String(value);
  };
  const ephemeralValue = stageContext(scope, 'ephemeral');
  if (![undefined, true, false, 'true', 'false'].includes(ephemeralValue as string | boolean | undefined))
    throw new Error(`Context ephemeral must be true or false, not "${String(ephemeralValue)}"`);
  const ephemeral = ephemeralValue === true || ephemeralValue === 'true';
  const edgeValue = stageContext(scope, 'edge');
  if (![undefined, '', true, false, 'true', 'false'].includes(edgeValue as string | boolean | undefined))
    throw new Error(`Context edge must be true or false, not "${String(edgeValue)}"`);
  // A production stage has the edge unless it says otherwise; a throwaway one only if it asks.
  const edge = edgeValue === undefined || edgeValue === '' ? !ephemeral : edgeValue === true || edgeValue === 'true';

  const problems: string[] = [];
  // One list of what is required, so a stage missing several things hears of all of them at once.
  const required = [...new Set([...(ephemeral ? [] : productionSettings), ...(edge ? edgeRequiredSettings : [])])];
  const missing = required.filter((setting) => text(setting) === undefined);
  if (missing.length > 0) {
    const kind = ephemeral ? `a stage with the edge on` : `a production stage${edge ? ' with the edge on (the default)' : ''}`;
    const ways = [
      ...(ephemeral ? [] : ['A throwaway stage says "ephemeral": true instead']),
      ...(edge ? ['"edge": false goes without CloudFront and WAF (and so without per-caller limits: docs/operations.md)'] : []),
    ];
    problems.push(
      `Stage ${name} is ${kind}, so it needs ${required.join(', ')} under stages.${name} in cdk.json ` +
        `(or -c name=value); missing: ${missing.join(', ')}. ${ways.join('; ')}.`,
    );
  }
  const account = ephemeral ? (text('account') ?? defaults.account) : text('account');
  const region = ephemeral ? (text('region') ?? defaults.region) : text('region');
  if (text('account') !== undefined && !accountPattern.test(text('account') ?? ''))
    problems.push(`Context account must be a 12-digit AWS account id, not "${text('account')}"`);
  if (text('region') !== undefined && !regionPattern.test(text('region') ?? ''))
    problems.push(`Context region must be an AWS region such as eu-west-1, not "${text('region')}"`);

  const tenantBaseDomain = text('tenantBaseDomain') ?? '';
  if (!/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(tenantBaseDomain))
    problems.push(`Context tenantBaseDomain must be a DNS name such as bi.example.com, not "${tenantBaseDomain}"`);

  const tenantCertificateArn = text('tenantCertificateArn');
  if (tenantCertificateArn !== undefined) problems.push(...certificateProblems(tenantCertificateArn, { account, region }));
  const edgeCertificateArn = edge ? text('edgeCertificateArn') : undefined;
  if (edgeCertificateArn !== undefined)
    problems.push(...certificateProblems(edgeCertificateArn, { account, region: EDGE_REGION }, 'edgeCertificateArn'));
  // The distribution takes the web ACL's ARN from the us-east-1 stack by a cross-region reference,
  // which CloudFormation can only resolve between stacks of known regions (an ephemeral stage's come
  // from the credentials, which an offline synth may not have).
  if (edge && ephemeral && (account === undefined || region === undefined))
    problems.push(
      `Stage ${name} has the edge on, which needs its account and region: set them, or synthesize with credentials (CDK_DEFAULT_ACCOUNT, CDK_DEFAULT_REGION)`,
    );

  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { name, ephemeral, env: { account, region }, tenantBaseDomain, tenantCertificateArn, edge, edgeCertificateArn };
}

/** Why each certificate setting must be of the region it is checked against. */
const certificateRegionReasons = {
  tenantCertificateArn: (region: string) =>
    `the stack deploys to ${region}: a regional API domain needs a certificate of its own region (request one there)`,
  edgeCertificateArn: (region: string) =>
    `CloudFront takes certificates of ${region} only: request one for *.<tenantBaseDomain> there`,
};

/**
 * An API Gateway regional domain takes a certificate of its own region and account only, a CloudFront
 * distribution one of us-east-1 (in the stage's account); CloudFormation would find out halfway through
 * a deploy. Unknown (unresolved) account or region are not checked.
 */
export function certificateProblems(
  arn: string,
  where: { account?: string; region?: string },
  setting: keyof typeof certificateRegionReasons = 'tenantCertificateArn',
): string[] {
  const match = certificateArnPattern.exec(arn);
  if (!match) return [`Context ${setting} must be an ACM certificate ARN, not "${arn}"`];
  const [, region, account] = match;
  const known = (value: string | undefined): value is string => value !== undefined && !Token.isUnresolved(value);
  const problems: string[] = [];
  if (known(where.region) && region !== where.region)
    problems.push(`Context ${setting} is a certificate of ${region}, but ${certificateRegionReasons[setting](where.region)}`);
  if (known(where.account) && account !== where.account)
    problems.push(`Context ${setting} belongs to account ${account}, but the stack deploys to ${where.account}`);
  return problems;
}
