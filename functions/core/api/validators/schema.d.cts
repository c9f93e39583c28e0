// Types of the modules `npm run generate` writes here: one request schema each.
import type { ValidateFunction } from 'ajv';

declare const schema: {
  /** The schema's $id, as the route table names it. */
  schemaName: string;
  validate: ValidateFunction;
  /** Top-level property → the message a body with an invalid value there gets. */
  invalidMessages: Record<string, string>;
  /** Pattern → what it means, in words. */
  patternMessages: Record<string, string>;
};
export = schema;
