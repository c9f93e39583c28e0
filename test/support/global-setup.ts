import type { TestProject } from 'vitest/node';
import { startTwin } from '../../local/twin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    twinUrl: string;
    dynamodbEndpoint: string;
    localClientToken: string;
  }
}

/** Starts the real local twin (DynamoDB Local + gateway) once for every test file. */
export default async function setup(project: TestProject) {
  const twin = await startTwin({ port: 0 });
  project.provide('twinUrl', twin.url);
  project.provide('dynamodbEndpoint', twin.dynamodbEndpoint);
  project.provide('localClientToken', twin.clientToken);
  return () => twin.stop();
}
