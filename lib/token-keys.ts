import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { tokenKeysLocation } from '#functions/core/auth/token-keys.ts';
import { stageContext } from './stage.ts';

/**
 * The keys that sign the service's bearer tokens (functions/core/auth/tokens.ts): a secret whose
 * first key CloudFormation generates (`{"current":"1","k1":"…"}`), so tokens are signed from the
 * first deploy. The functions read it to check and mint tokens; the edge stack copies it into its
 * KeyValueStore; `npm run admin -- token-keys rotate` adds a key to both.
 */
export class TokenKeys {
  readonly secret: Secret;
  /** The environment of a function that checks or mints tokens. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack, options: { retain: boolean }) {
    this.secret = new Secret(stack, 'TokenKeys', {
      description: 'Keys that sign bearer tokens (JSON {current, k<id>}; rotate with npm run admin -- token-keys rotate)',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ current: '1' }),
        generateStringKey: 'k1',
        passwordLength: 64,
        excludePunctuation: true,
      },
      // A token signed by a key that is gone is refused: a production stage keeps its keys.
      removalPolicy: options.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A token key verifies every token signed with it for as long as the token lives, so keys are added by an operator ' +
        '(npm run admin -- token-keys rotate, docs/operations.md), never replaced by a rotation function.',
    });
    this.environment = { [tokenKeysLocation.secretArnVariable]: this.secret.secretArn };
  }
}

/**
 * Whether tokens of the unsigned form (every token issued before tokens were signed) are still
 * accepted: `accept` (the default) until `npm run admin -- tokens unsigned` lists none, then `refuse`,
 * and a made-up token of that form costs nothing behind the edge either (docs/operations.md, Tokens).
 */
export function unsignedTokensSetting(scope: Construct): 'accept' | 'refuse' {
  const value = stageContext(scope, 'unsignedTokens') ?? 'accept';
  if (value !== 'accept' && value !== 'refuse')
    throw new Error(`Context unsignedTokens must be accept or refuse, not "${String(value)}"`);
  return value;
}
