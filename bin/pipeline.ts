/**
 * The release pipeline's CDK app (lib/release-pipeline.ts), apart from bin/app.ts so that `cdk deploy
 * --all` of a stage never touches the pipeline. Its settings are the `pipeline` object of cdk.json's
 * context (docs/operations.md, Release and roll back):
 * `npx cdk -a "npx tsx bin/pipeline.ts" synth` builds it offline; `... deploy BiTenantAdminPipeline`
 * deploys it once, after which it updates itself from the repository.
 */
import { App } from 'aws-cdk-lib';
import { releasePipeline } from '#lib/release-pipeline.ts';

releasePipeline(new App());
