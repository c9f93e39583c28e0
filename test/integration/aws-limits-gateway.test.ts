/**
 * The twin's gateway refuses what API Gateway and Lambda refuse, exactly at each limit
 * (functions/core/aws-limits.ts), and answers as they do: API Gateway's own bare bodies, never the
 * service's envelope. The integration's limits are shown on `integrate` with handlers made for it;
 * the gateway's own through real HTTP to the shared twin.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, inject, test } from 'vitest';
import { resultBytes } from '#functions/core/api/answer-fit.ts';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import {
  gatewayAnswers,
  httpApiIntegrationTimeoutSeconds,
  httpApiPayloadBytes,
  httpApiRequestLineAndHeaderBytes,
  lambdaSyncPayloadBytes,
} from '#functions/core/aws-limits.ts';
import { routeTimeoutSeconds } from '#functions/routes.ts';
import { apiGatewayEvent, eventBytes } from '#local/api-gateway-event.ts';
import { integrate } from '#local/gateway.ts';
import { newClient, newTenant } from '#test/support/api.ts';

const eventWithBody = (body: string) =>
  apiGatewayEvent({
    method: 'POST',
    routeKey: 'POST /tenant/users',
    pathParameters: {},
    path: '/tenant/users',
    rawQuery: '',
    headers: { 'content-type': 'application/json', host: 'localhost' },
    cookies: undefined,
    body: Buffer.from(body),
    protocol: 'HTTP/1.1',
    sourceIp: '127.0.0.1',
  });

const answering = (result: APIGatewayProxyStructuredResultV2) => async () => result;
const ok = { statusCode: 200, headers: { 'content-type': 'text/plain' } };

describe("Lambda's synchronous payload limit", () => {
  test('an event of exactly 6 MiB reaches the function; one byte more is refused as API Gateway answers it', async () => {
    const probe = eventWithBody('x');
    const body = 'x'.repeat(1 + lambdaSyncPayloadBytes - eventBytes(probe));
    const atLimit: APIGatewayProxyEventV2 = { ...probe, body };
    expect(eventBytes(atLimit)).toBe(lambdaSyncPayloadBytes);
    let reached = 0;
    const counting = async () => {
      reached++;
      return { ...ok, body: 'reached' };
    };
    expect(await integrate(counting, atLimit, 'limit-probe')).toEqual({ result: { ...ok, body: 'reached' } });
    expect(await integrate(counting, { ...probe, body: `${body}x` }, 'limit-probe')).toEqual({
      refused: gatewayAnswers.integrationFailed,
    });
    expect(reached).toBe(1);
  });

  test('characters beyond ASCII count as the escapes a JSON writer may make of them (6 bytes a UTF-16 unit)', () => {
    const ascii = eventBytes(eventWithBody('ab'));
    expect(eventBytes(eventWithBody('aé'))).toBe(ascii + 5);
    expect(eventBytes(eventWithBody('a😀'))).toBe(ascii - 1 + 12);
    // A control character is escaped by JSON itself: \u0001, 6 bytes.
    expect(eventBytes(eventWithBody('a\u0001'))).toBe(ascii + 5);
  });

  test('a result of exactly 6 MiB is answered; one byte more is API Gateway’s bare 500', async () => {
    const probe = { ...ok, body: '' };
    const atLimit = { ...probe, body: 'x'.repeat(lambdaSyncPayloadBytes - resultBytes(probe)) };
    expect(resultBytes(atLimit)).toBe(lambdaSyncPayloadBytes);
    const event = eventWithBody('{}');
    expect(await integrate(answering(atLimit), event, 'limit-probe')).toEqual({ result: atLimit });
    const over = { ...atLimit, body: `${atLimit.body}x` };
    expect(await integrate(answering(over), event, 'limit-probe')).toEqual({ refused: gatewayAnswers.integrationFailed });
    // Escaping counts: a body of quotes takes two bytes each in the result.
    const quotes = { ...probe, body: '"'.repeat(Math.ceil(lambdaSyncPayloadBytes / 2)) };
    expect(await integrate(answering(quotes), event, 'limit-probe')).toEqual({ refused: gatewayAnswers.integrationFailed });
  });

  test('a function still running at its timeout is stopped: API Gateway’s bare 500', async () => {
    const hanging = () => new Promise<APIGatewayProxyStructuredResultV2>(() => undefined);
    expect(await integrate(hanging, eventWithBody('{}'), 'limit-probe', 50)).toEqual({
      refused: gatewayAnswers.integrationFailed,
    });
    // Every function times out before the HTTP API's integration timeout, so its 503 is never what a caller gets.
    expect(routeTimeoutSeconds).toBeLessThan(httpApiIntegrationTimeoutSeconds);
  });
});

describe("the HTTP API's own limits, through the twin", () => {
  const twin = () => inject('twinUrl');
  const answerOf = async (response: Response) => ({ status: response.status, body: await response.json() });

  test('request line and header values: 10,240 bytes pass, one more is refused', async () => {
    const requestLine = Buffer.byteLength('GET /health HTTP/1.1');
    const sent = async (total: number) => {
      // undici adds host, connection, accept, accept-language, sec-fetch-mode, user-agent and
      // accept-encoding values of its own: they are counted too, so they are given here.
      const fixed = {
        host: new URL(twin()).host,
        connection: 'keep-alive',
        accept: '*/*',
        'accept-language': '*',
        'sec-fetch-mode': 'cors',
        'user-agent': 'limits',
        'accept-encoding': 'gzip, deflate',
      };
      const used = requestLine + Object.values(fixed).reduce((sum, value) => sum + Buffer.byteLength(value), 0);
      const response = await fetch(`${twin()}/health`, {
        headers: { ...fixed, 'x-padding': 'p'.repeat(total - used) },
      });
      return answerOf(response);
    };
    expect((await sent(httpApiRequestLineAndHeaderBytes)).status).toBe(200);
    expect(await sent(httpApiRequestLineAndHeaderBytes + 1)).toEqual(gatewayAnswers.headersTooLarge);
  });

  test('a body over 10 MB is the gateway’s 413; at 10 MB it reaches Lambda, whose 6 MB refuse it (500)', async () => {
    const post = async (bytes: number) =>
      answerOf(
        await fetch(`${twin()}/tenant/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: 'x'.repeat(bytes),
        }),
      );
    expect(await post(httpApiPayloadBytes + 1)).toEqual(gatewayAnswers.payloadTooLarge);
    expect(await post(httpApiPayloadBytes)).toEqual(gatewayAnswers.integrationFailed);
  });

  test('a body over our bound, in the characters that escape the most, is still our own 413 in the envelope', async () => {
    const tenant = await newTenant((await newClient()).token);
    const response = await fetch(`${twin()}/tenant/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.token}` },
      body: '\u0001'.repeat(maxBodyBytes + 1),
    });
    const answer = await answerOf(response);
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ status: 'error', code: 'payload_too_large' });
  });
});
