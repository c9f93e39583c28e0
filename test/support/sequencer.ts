import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The connected files that start first, longest first as a fresh clone's run measured them, whatever vitest's cache says (a fresh clone has
 * none, and vitest then starts the largest files first). Two reasons:
 * - the whole run ends sooner when its longest files do not start last, with nothing left to run beside them;
 * - tenant-deletion-races scans the whole shared table for token items no answer showed: at the start the
 *   table is small, and DynamoDB Local, which serves one request at a time, is held for milliseconds rather
 *   than for the seconds a scan of a table every file has written to takes.
 */
const startFirst = [
  'test/e2e/tenant-deletion-races.test.ts',
  'test/infra/service-stack.test.ts',
  'test/integration/fault-injection.test.ts',
  'test/e2e/local-twin-process.test.ts',
  'test/e2e/readme.test.ts',
  'test/integration/answer-sizes.test.ts',
  'test/e2e/kill-durability.test.ts',
  'test/e2e/alerts.test.ts',
  'test/e2e/fuzz.test.ts',
  'test/infra/edge.test.ts',
  'test/e2e/admin-cli.test.ts',
  'test/integration/read-round-trips.test.ts',
];

const rank = (file: TestSpecification) => {
  const index = startFirst.findIndex((path) => file.moduleId.endsWith(path));
  return index === -1 ? startFirst.length : index;
};

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: the files not listed keep vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
