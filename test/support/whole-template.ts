import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

type Json = unknown;
interface TemplateJson {
  Resources: Record<string, { Type: string; Properties?: Record<string, Json> }>;
  Outputs?: Record<string, { Value: Json }>;
  Conditions?: Record<string, Json>;
  [section: string]: unknown;
}

/** Every value of `json` with `replace` applied bottom-up to each object (a Ref, a GetAtt, …). */
function mapObjects(json: Json, replace: (object: Record<string, Json>) => Json): Json {
  if (Array.isArray(json)) return json.map((item) => mapObjects(item, replace));
  if (json === null || typeof json !== 'object') return json;
  const mapped = Object.fromEntries(Object.entries(json).map(([key, value]) => [key, mapObjects(value, replace)]));
  return replace(mapped);
}

const nestedStacksOf = (stack: Stack): NestedStack[] =>
  stack.node.children.flatMap((child) => (child instanceof NestedStack ? [child] : []));

/**
 * A stack's template with its nested stacks' resources in it, as one template: each nested template's
 * parameters replaced by what the stack passes them, and each of its outputs the stack reads replaced by
 * its value. Assertions about the service (this function's IAM, that route's integration) then read the
 * same whichever template holds the resource; `templates` keeps the real ones apart (their sizes).
 */
export function wholeTemplate(stack: Stack): Template {
  return Template.fromJSON(wholeTemplateJson(stack));
}

function wholeTemplateJson(stack: Stack): TemplateJson {
  let whole = Template.fromStack(stack).toJSON() as TemplateJson;
  for (const nested of nestedStacksOf(stack)) {
    const resource = nested.nestedStackResource;
    if (!resource) throw new Error(`${nested.node.path} has no resource in its parent`);
    const id = stack.resolve(resource.logicalId) as string;
    const parameters = (whole.Resources[id]?.Properties?.Parameters ?? {}) as Record<string, Json>;
    const inner = mapObjects(wholeTemplateJson(nested), (object) => {
      const ref = object.Ref;
      if (typeof ref === 'string' && Object.keys(object).length === 1 && ref in parameters) return parameters[ref];
      return object;
    }) as TemplateJson;
    const outputs = inner.Outputs ?? {};
    whole = mapObjects(whole, (object) => {
      const getAtt = object['Fn::GetAtt'];
      if (Array.isArray(getAtt) && getAtt[0] === id && typeof getAtt[1] === 'string' && getAtt[1].startsWith('Outputs.')) {
        const output = outputs[getAtt[1].slice('Outputs.'.length)];
        if (!output) throw new Error(`${nested.node.path} has no output ${getAtt[1]}`);
        return output.Value;
      }
      return object;
    }) as TemplateJson;
    const { [id]: _nestedResource, ...resources } = whole.Resources;
    for (const logicalId of Object.keys(inner.Resources))
      if (logicalId in resources) throw new Error(`${logicalId} is in both ${stack.node.path} and ${nested.node.path}`);
    whole = {
      ...whole,
      Resources: { ...resources, ...inner.Resources },
      Conditions: { ...whole.Conditions, ...inner.Conditions },
    };
  }
  return whole;
}

/** Whether a property's value names the resource (a Ref to it, however joined or split). */
export const refersTo = (value: unknown, logicalId: string) => JSON.stringify(value).includes(JSON.stringify({ Ref: logicalId }));

/** The event source mapping that feeds a function, by the function's logical id: it names the function's live alias. */
export function liveEventSourceOf<P extends { FunctionName: unknown }>(
  template: Template,
  functionLogicalId: string,
): { Properties: P } | undefined {
  const aliasIds = Object.keys(
    template.findResources('AWS::Lambda::Alias', { Properties: { FunctionName: { Ref: functionLogicalId } } }),
  );
  const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as { Properties: P }[];
  return mappings.find((mapping) => aliasIds.some((aliasId) => refersTo(mapping.Properties.FunctionName, aliasId)));
}

/** The logical ids a value refers to (Ref and Fn::GetAtt), anywhere inside it. */
export function referencedIds(value: unknown): string[] {
  const text = JSON.stringify(value);
  return [
    ...[...text.matchAll(/\{"Ref":"([^"]+)"\}/g)].map((match) => match[1] as string),
    ...[...text.matchAll(/\{"Fn::GetAtt":\["([^"]+)","[^"]+"\]\}/g)].map((match) => match[1] as string),
  ];
}

/**
 * What one deploy-time function calls another through, naming it in its properties: a function (in its environment)
 * or a state machine (in its definition).
 */
const callers = new Set(['AWS::Lambda::Function', 'AWS::StepFunctions::StateMachine']);
const isCustomResource = (type: string) => type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource';

/**
 * The functions that run only during a deploy: the one each custom resource's ServiceToken names, and every function
 * that one reaches through functions and state machines. CDK's provider framework (lib/stored-data-migration.ts) is
 * such a chain: its entry function names ours in its environment (USER_ON_EVENT_FUNCTION_ARN,
 * USER_IS_COMPLETE_FUNCTION_ARN) and its waiter state machine, whose definition names the framework's isComplete and
 * onTimeout functions. Following references rather than names keeps a new custom resource, or a framework version that
 * renames its functions, in this class. They take no traffic and emit no metric of the service, and their failure fails
 * the deploy itself.
 */
export function deployTimeFunctionIds(template: Template): Set<string> {
  const { Resources: resources } = template.toJSON() as TemplateJson;
  const reached = new Set<string>();
  const follow = (value: unknown) => {
    for (const id of referencedIds(value)) {
      const resource = resources[id];
      if (reached.has(id) || !resource || !callers.has(resource.Type)) continue;
      reached.add(id);
      follow(resource.Properties);
    }
  };
  for (const resource of Object.values(resources)) if (isCustomResource(resource.Type)) follow(resource.Properties?.ServiceToken);
  return new Set([...reached].filter((id) => resources[id]?.Type === 'AWS::Lambda::Function'));
}
