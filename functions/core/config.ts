/** Runtime configuration, read from the environment once per cold start. */
export interface Config {
  tableName: string;
  /** Set only off AWS (DynamoDB Local); the SDK's default endpoint otherwise. */
  dynamodbEndpoint: string | undefined;
}

export interface ApiConfig extends Config {
  /** Host name under which tenant domains are minted: `<slug>-<id>.<tenantBaseDomain>`. */
  tenantBaseDomain: string;
  /** Origin of a tenant's BI, `{dominio}` standing for its domain: `https://{dominio}` (the twin: `http://{dominio}:3000`). */
  tenantOrigin: string;
  /** `iss` of login tokens. */
  loginTokenIssuer: string;
}

let cached: Config | undefined;
let cachedApi: ApiConfig | undefined;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** What every piece that touches the table needs (functions, the admin CLI). Throws when missing. */
export function config(): Config {
  cached ??= { tableName: required('TABLE_NAME'), dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT || undefined };
  return cached;
}

/** Everything the HTTP functions need; called at their cold start so a misconfigured one fails there. */
export function apiConfig(): ApiConfig {
  cachedApi ??= {
    ...config(),
    tenantBaseDomain: required('TENANT_BASE_DOMAIN'),
    tenantOrigin: process.env.TENANT_ORIGIN || 'https://{dominio}',
    loginTokenIssuer: process.env.LOGIN_TOKEN_ISSUER || 'bi-tenant-admin',
  };
  return cachedApi;
}
