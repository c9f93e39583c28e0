import { type Stack, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';

/** The login-token keyring. Created empty; `npm run admin -- keys rotate` puts the first key in. */
export class SigningKeys {
  readonly secret: Secret;
  /** The environment of a function that signs or verifies login tokens. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack) {
    this.secret = new Secret(stack, 'SigningKeys', {
      description: 'ES256 keys that sign SSO login tokens (JSON keyring; rotate with npm run admin -- keys rotate)',
      generateSecretString: { secretStringTemplate: JSON.stringify({ keys: [] }), generateStringKey: 'unused' },
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The keyring is rotated by an operator with `npm run admin -- keys rotate` (docs/operations.md), which adds a key ' +
        'and keeps the retired ones published until the tokens they signed expire; a Secrets Manager rotation function ' +
        'replacing the value would break the verification of live login tokens.',
    });
    this.environment = { SIGNING_KEYS_SECRET_ARN: this.secret.secretArn };
  }
}
