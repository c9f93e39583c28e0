/**
 * The CDK app. A stage's settings live in cdk.json under `stages.<stage>` (lib/stage.ts):
 * `npx cdk deploy --all -c stage=prod` (with the edge on, a stage is two stacks: lib/service-app.ts);
 * `-c name=value` overrides one for a command.
 */
import { App } from 'aws-cdk-lib';
import { serviceStacks } from '#lib/service-app.ts';
import { stageOf } from '#lib/stage.ts';

const app = new App();
serviceStacks(app, stageOf(app, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }));
