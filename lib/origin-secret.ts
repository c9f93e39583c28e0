import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AUTHORIZER_CACHE_SECONDS, ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import { ORIGIN_SECRET_LENGTH } from '#functions/core/edge/origin-secret-rotation.ts';
import { functionWithOwnRole, type ProjectFunction } from './project-function.ts';
import { EDGE_REGION } from './stage.ts';

/**
 * The origin secret's name. The API's authorizer (in the stage's region) reads it by name and region: the
 * service's stack deploys before the edge's, so it cannot take the secret's full ARN from it.
 */
export const originSecretName = (stage: string) => `BiTenantAdmin-${stage}/origin-verify`;

/** The secret's ARN without Secrets Manager's suffix: GetSecretValue takes it as SecretId, and it names the region. */
const originSecretPartialArn = (stack: Stack, stage: string) =>
  `arn:${stack.partition}:secretsmanager:${EDGE_REGION}:${stack.account}:secret:${originSecretName(stage)}`;

/**
 * The value CloudFront sends the API in `x-origin-verify`: a secret of the edge stack (us-east-1), which
 * the distributions take by a dynamic reference and a rotation function replaces every
 * `rotationDays` (functions/edge/origin-secret-rotation.ts). Nothing else holds it.
 */
export class OriginSecret {
  readonly secret: Secret;

  constructor(
    private readonly stack: Stack,
    private readonly stage: string,
  ) {
    this.secret = new Secret(stack, 'OriginSecret', {
      secretName: originSecretName(stage),
      description: `The ${ORIGIN_HEADER} header CloudFront sends the API of stage ${stage}; rotated by its own function`,
      generateSecretString: { passwordLength: ORIGIN_SECRET_LENGTH, excludePunctuation: true, includeSpace: false },
      // A new value needs a deploy of the distributions; an old one is accepted through the overlap anyway.
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }

  /** Rotates the value every `days`, setting it on these distributions (ours, and the front end's if it keeps its own). */
  rotateOn(distributions: { ids: string[]; arns: string[]; webAclArn: string }, days: number): ProjectFunction {
    const fn = functionWithOwnRole(this.stack, 'OriginSecretRotation', {
      entry: 'functions/edge/origin-secret-rotation.ts',
      description: `Rotates ${originSecretName(this.stage)} and sets each new value on the distributions`,
      environment: { ORIGIN_DISTRIBUTION_IDS: distributions.ids.join(',') },
      timeoutSeconds: 60,
      // The rotation's own actions on the secret are granted by addRotationSchedule.
      statements: [
        new PolicyStatement({
          actions: ['cloudfront:GetDistributionConfig', 'cloudfront:UpdateDistribution'],
          resources: distributions.arns,
        }),
        // An update that names a web ACL (each distribution's does) is refused without read access to it
        // (CloudFront: "Unable to verify read permissions on Web ACL"); AWS documents no permission list for it.
        new PolicyStatement({ actions: ['wafv2:GetWebACL'], resources: [distributions.webAclArn] }),
        new PolicyStatement({ actions: ['secretsmanager:GetRandomPassword'], resources: ['*'] }),
      ],
      wildcardReason: 'Nor does secretsmanager:GetRandomPassword, which makes each new value.',
    });
    this.secret.addRotationSchedule('OriginSecretRotationSchedule', {
      rotationLambda: fn,
      automaticallyAfter: Duration.days(days),
      // The first rotation comes on schedule, not in the middle of the deploy that made the distributions.
      rotateImmediatelyOnUpdate: false,
    });
    return fn;
  }
}

/**
 * The HTTP API's authorizer with the edge on (functions/edge/origin-authorizer.ts): identity source the
 * origin header (missing: API Gateway answers 401 without calling it), answers cached per value.
 */
export function originAuthorizer(stack: Stack, stage: string, reservedConcurrency?: number) {
  const fn = functionWithOwnRole(stack, 'OriginAuthorizer', {
    entry: 'functions/edge/origin-authorizer.ts',
    description: `Lets through requests that carry the edge's ${ORIGIN_HEADER} (${originSecretName(stage)})`,
    environment: { ORIGIN_SECRET_ARN: originSecretPartialArn(stack, stage) },
    timeoutSeconds: 10,
    reservedConcurrency,
    statements: [
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        // Secrets Manager adds a hyphen and six characters to a secret's name in its ARN
        // (https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_examples.html).
        resources: [`${originSecretPartialArn(stack, stage)}-??????`],
      }),
    ],
  });
  const authorizer = new HttpLambdaAuthorizer('OriginAuthorizer', fn, {
    authorizerName: 'came-through-the-edge',
    identitySource: [`$request.header.${ORIGIN_HEADER}`],
    responseTypes: [HttpLambdaResponseType.SIMPLE],
    resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
  });
  return { fn, authorizer };
}
