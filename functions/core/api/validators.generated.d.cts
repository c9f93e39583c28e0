// Types of validators.generated.cjs (written by `npm run generate`): one validate function per request schema.
import type { ValidateFunction } from 'ajv';

declare const validators: Record<string, ValidateFunction | undefined>;
export = validators;
