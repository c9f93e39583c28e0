import { Logger } from '@aws-lambda-powertools/logger';
import { serviceName } from './names.ts';

/** One structured (JSON) logger for every function; never pass it a token or a secret. */
export const logger = new Logger({ serviceName });
