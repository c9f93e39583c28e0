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
