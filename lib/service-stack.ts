import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tableDefinition } from '../functions/core/store/table-definition.ts';
import { type Route, routes, type TableAccess } from '../functions/routes.ts';
import { ProjectFunction } from './project-function.ts';

export interface ServiceStackProps extends StackProps {
  stage: string;
  tenantBaseDomain: string;
}

/**
 * The DynamoDB actions behind each level of table access: exactly what the code calls, nothing
 * more (grantReadData would add Scan, which could read every tenant's rows). Transactions are
 * authorized per item action, so TransactWriteItems needs no action of its own.
 */
export const tableActions: Record<TableAccess, string[]> = {
  none: [],
  read: ['dynamodb:GetItem', 'dynamodb:Query'],
  readWrite: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
};

/** `GET /tenants/{id}/token` becomes `GetTenantsIdToken`: stable, readable construct ids. */
export function functionIdOf(route: Pick<Route, 'method' | 'path'>): string {
  const words = [route.method.toLowerCase(), ...route.path.split(/[^A-Za-z0-9]+/)].filter(Boolean);
  return words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('');
}

/** The whole service: one table, one HTTP API, one function per row of the route table. */
export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);

    const table = new Table(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      deletionProtection: props.stage === 'prod',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of tableDefinition.globalIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    const api = new HttpApi(this, 'Api', { apiName: `bi-tenant-admin-${props.stage}` });
    const environment = { TABLE_NAME: table.tableName, TENANT_BASE_DOMAIN: props.tenantBaseDomain };

    for (const route of routes) {
      const functionId = functionIdOf(route);
      const fn = new ProjectFunction(this, functionId, {
        entry: `functions/http/${route.handler}.ts`,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment,
      });
      if (route.table !== 'none') table.grant(fn, ...tableActions[route.table]);
      api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${functionId}Integration`, fn),
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: table.tableName });
  }
}
