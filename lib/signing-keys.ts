import { CustomResource, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { functionWithOwnRole } from './project-function.ts';

/**
 * The login-token keyring: a secret the stack creates empty, into which a custom resource puts the
 * first key at deploy (functions/deploy/first-signing-key.ts, only while the keyring has no active
 * key); `npm run admin -- keys rotate` adds the later ones.
 */
export class SigningKeys {
  readonly secret: Secret;
  /** The environment of a function that signs or verifies login tokens. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack, options: { retain: boolean }) {
    this.secret = new Secret(stack, 'SigningKeys', {
      description: 'ES256 keys that sign SSO login tokens (JSON keyring; rotate with npm run admin -- keys rotate)',
      generateSecretString: { secretStringTemplate: JSON.stringify({ keys: [] }), generateStringKey: 'unused' },
      // A login token signed by a key that is gone is refused: a production stage keeps its keys, as it does
      // its token keys (lib/token-keys.ts).
      removalPolicy: options.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The keyring is rotated by an operator with `npm run admin -- keys rotate` (docs/operations.md), which adds a key ' +
        'and keeps the retired ones published until the tokens they signed expire; a Secrets Manager rotation function ' +
        'replacing the value would break the verification of live login tokens.',
    });
    this.environment = { SIGNING_KEYS_SECRET_ARN: this.secret.secretArn };

    // It reads the keyring and writes it back with a key when it has none: that secret, nothing else.
    const firstKey = functionWithOwnRole(stack, 'FirstSigningKey', {
      entry: 'functions/deploy/first-signing-key.ts',
      description: 'Custom resource: puts a first login-token signing key into the keyring when it has none',
      environment: this.environment,
      timeoutSeconds: 60,
      statements: [
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'],
          resources: [this.secret.secretArn],
        }),
      ],
    });
    new CustomResource(stack, 'FirstSigningKeyInKeyring', {
      serviceToken: firstKey.functionArn,
      resourceType: 'Custom::FirstSigningKey',
      // A replaced secret changes this property, and the Update puts a first key into the new one.
      properties: { SecretArn: this.secret.secretArn },
    });
  }
}
