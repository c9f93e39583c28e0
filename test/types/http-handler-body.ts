/**
 * Type-level checks, compiled by `tsc -p .` (npm run lint) and never run: a handler's body type
 * comes from the validator it passes to httpHandler. If that inference broke (a body typed `any`,
 * or a type argument needed again), the assertions below would stop compiling, and each
 * `@ts-expect-error` would be reported as unused.
 */
import { type ApiRequest, type ApiResponse, httpHandler } from '#functions/core/api/http-handler.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import createTenantSchema, { type CreateTenantBody } from '#functions/core/api/validators/create-tenant.cjs';
import type { DeleteTenantBody } from '#functions/core/api/validators/delete-tenant.cjs';
import scheduleV2Schema from '#functions/core/api/validators/schedule.v2.cjs';

/** True only when A and B are the same type (`any` equals nothing else). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when `value` is of type `Expected` exactly. */
const assertType =
  <Expected>() =>
  <Value>(value: Equal<Value, Expected> extends true ? Value : never) =>
    value;

const answer: ApiResponse = { status: 200, body: null };

export const checkedBody = httpHandler(
  async ({ body }) => {
    assertType<CreateTenantBody>()(body);
    return answer;
  },
  { body: createTenantSchema },
);

export const noBody = httpHandler(async ({ body }) => {
  assertType<undefined>()(body);
  return answer;
});

/** A handler that validates the body itself gets it unchecked: `unknown` until it has. */
export const bodyValidatedByHandler = httpHandler(
  async ({ body }) => {
    assertType<unknown>()(body);
    return answer;
  },
  { body: scheduleV2Schema, yaml: parseYamlBody, validatedByHandler: true },
);

export const bodyOfAnotherSchema = httpHandler(
  // @ts-expect-error the validator accepts a CreateTenantBody, not a DeleteTenantBody
  async (request: ApiRequest<DeleteTenantBody>) => ({ status: 200, body: request.body.id }),
  { body: createTenantSchema },
);

export const checkedBodyTakenUnchecked = httpHandler(
  // @ts-expect-error unknown is not a CreateTenantBody: a handler that validates the body itself cannot claim its type
  async (request: ApiRequest<CreateTenantBody>) => ({ status: 200, body: request.body.nome }),
  { body: createTenantSchema, validatedByHandler: true },
);

export const bodyWithoutValidator = httpHandler(
  // @ts-expect-error a route that passes no validator gets no body
  async (request: ApiRequest<CreateTenantBody>) => ({ status: 200, body: request.body.nome }),
);
