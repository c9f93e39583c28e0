import type { SchemaModule } from '../validation.ts';
declare const schema: SchemaModule;
export = schema;
