/**
 * No shared limit one caller can spend for everyone: every route that takes no token has a throttle
 * bucket of its own, so a flood there is answered 429 there. A token-bucket model of API Gateway,
 * fed with the synthesized stage, shows tenant routes answering through such a flood, and shows the
 * same flood starving them without the route settings (the model can tell the two apart).
 *
 * The model (throttle-model.ts) reads the stage's default route settings the cautious way: as one bucket
 * shared by every route without settings of its own. If API Gateway keeps a bucket per route, tenants
 * fare better still. What one caller with a token can do to the others is edge.test.ts's.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeKey, routes } from '#functions/routes.ts';
import { DEFAULT_ANONYMOUS_BURST_LIMIT, DEFAULT_ANONYMOUS_RATE_LIMIT } from '#lib/deployment-settings.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { testApp } from '../support/cdk-app.ts';
import { type Limits, type StageSettings, simulate } from './throttle-model.ts';

describe('API throttling', () => {
  let stage: StageSettings;
  const anonymousKeys = [...routes.filter((route) => route.auth.length === 0).map(routeKey), '$default'];

  beforeAll(() => {
    const template = Template.fromStack(
      new ServiceStack(testApp(), 'Test', { stage: 'test', tenantBaseDomain: 'bi.example.com' }),
    );
    const stages = Object.values(template.findResources('AWS::ApiGatewayV2::Stage')) as Array<{ Properties: StageSettings }>;
    expect(stages).toHaveLength(1);
    stage = stages[0]?.Properties as StageSettings;
  });

  it('gives every route without a token, and the $default route, a bucket of its own; routes with a token share the stage', () => {
    expect(Object.keys(stage.RouteSettings ?? {}).sort()).toEqual([...anonymousKeys].sort());
    for (const limits of Object.values(stage.RouteSettings ?? {}))
      expect(limits).toEqual({
        ThrottlingRateLimit: DEFAULT_ANONYMOUS_RATE_LIMIT,
        ThrottlingBurstLimit: DEFAULT_ANONYMOUS_BURST_LIMIT,
      });
  });

  it('takes the anonymous limits from context', () => {
    const app = testApp({ anonymousRateLimit: '5', anonymousBurstLimit: 10 });
    const template = Template.fromStack(new ServiceStack(app, 'Test', { stage: 'test', tenantBaseDomain: 'bi.example.com' }));
    const settings = (Object.values(template.findResources('AWS::ApiGatewayV2::Stage'))[0] as { Properties: StageSettings })
      .Properties.RouteSettings;
    expect(settings?.['GET /health']).toEqual({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 });
  });

  it('keeps tenant routes answering through a flood of 5,000 requests a second on the anonymous routes', () => {
    const flood = anonymousKeys.map((key) => ({ key, perSecond: 5000 / anonymousKeys.length }));
    const tenants = ['GET /tenant/users', 'POST /tenant/login', 'POST /agent/heartbeat', 'GET /tenants'].map((key) => ({
      key,
      perSecond: 25,
    }));
    const { passed, sent } = simulate(stage, [...flood, ...tenants]);
    for (const { key } of tenants) expect(passed.get(key), key).toBe(sent.get(key));
    // What the flood gets to the functions is bounded by the anonymous buckets alone.
    for (const { key } of flood) {
      const limits = stage.RouteSettings?.[key] as Limits;
      expect(passed.get(key), key).toBeLessThanOrEqual(limits.ThrottlingRateLimit * 60 + limits.ThrottlingBurstLimit);
    }
    // Without the route settings, the same flood starves them: the shared bucket goes to whoever sends most.
    const starved = simulate({ DefaultRouteSettings: stage.DefaultRouteSettings }, [...flood, ...tenants]);
    const tenantPassed = tenants.reduce((sum, { key }) => sum + (starved.passed.get(key) ?? 0), 0);
    const tenantSent = tenants.reduce((sum, { key }) => sum + (starved.sent.get(key) ?? 0), 0);
    expect(tenantPassed / tenantSent).toBeLessThan(0.1);
  });
});
