import { type FromEnvInit, fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * What the SDK clients use instead of their default credential chain in the Lambda bundles (the
 * esbuild alias in lib/project-function.ts puts it in place of `@aws-sdk/credential-provider-node`).
 * Lambda hands a function its execution role's credentials in environment variables, where the
 * default chain looks first anyway; the chain's other providers (profiles, SSO, STS web identity,
 * the instance metadata service) never answer there, and they are about 130 KB of every bundle.
 * The twin and the CLI, unbundled, keep the whole chain.
 */
export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
