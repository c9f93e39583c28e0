/**
 * The edge's first check of bearer tokens: a CloudFront Function (runtime cloudfront-js-2.0) on
 * viewer requests. It refuses, with the service's own 401, what the handler would refuse before
 * any lookup (functions/core/auth/tokens.ts `screenAuthorization`): no bearer token, a signed
 * token whose key is unknown or whose MAC is wrong, an unsigned one while those are refused. A
 * forged token then costs no function run and no table read. Whatever looks valid passes untouched:
 * the origin still looks every token up (revocation stays immediate there).
 *
 * Written within the runtime as AWS documents it:
 * - https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/functions-javascript-runtime-20.html
 *   (ES 5.1 with some later features, `import crypto from 'crypto'`: `createHmac` with sha256 and
 *   `digest` to hex, base64 or base64url); this file keeps to `var`, plain functions and
 *   async/await, nothing newer (no optional chaining).
 * - https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/functions-custom-methods.html
 *   (`import cf from 'cloudfront'`, `cf.kvs()`, `get` rejecting a key the store does not have).
 * - https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/functions-event-structure.html
 *   (event.context.requestId, lowercase header names with `value` / `multiValue`, a generated
 *   response with statusCode, headers and a `{ encoding: 'text', data }` body).
 * - https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html#limits-functions
 *   (10 KB of code: functions/edge/viewer-request-code.ts strips these comments and checks the size).
 *
 * The settings line is replaced at synth (viewerRequestCode): `anonymousPaths` (an entry ending in
 * `/` is a prefix, any other an exact path) and `acceptUnsigned`. The token keys come from the
 * KeyValueStore associated with the function: `k<id>` → the key's secret text (token-keys-kvs.ts).
 */
import crypto from 'crypto';
import cf from 'cloudfront';

var settings = __EDGE_SETTINGS__;

var kvs = cf.kvs();
// The handler's patterns (tokens.ts `bearerPattern`, `signedTokenPattern`), spelled again: this runtime imports no module of ours.
var bearerPattern = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([\x21-\x7e]{1,512})$/;
var signedPattern =
  /^(cli|ten|agt)_([1-9][0-9]{0,5})\.([1-9][0-9]{0,14}(?:-[1-9][0-9]{0,14}){0,2})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;
var ownerArity = { cli: 1, ten: 2, agt: 3 };
// The handler's rule for a caller's X-Request-Id (request-id.ts `callerRequestIdPattern`), spelled again.
var requestIdPattern = /^[\x21-\x7e]{1,128}$/;

function anonymous(uri) {
  for (var i = 0; i < settings.anonymousPaths.length; i++) {
    var path = settings.anonymousPaths[i];
    if (path.charAt(path.length - 1) === '/' ? uri.indexOf(path) === 0 : uri === path) return true;
  }
  return false;
}

// The handler's 401: the error envelope of functions/core/errors.ts errorBody, its headers. Its request
// id as the handler's is chosen: the caller's X-Request-Id when valid, else CloudFront's own.
function refuse(event, message, challenge) {
  var sent = joined(event.request.headers, 'x-request-id');
  var requestId = sent !== undefined && requestIdPattern.test(sent) ? sent : event.context.requestId;
  var body = {
    status: 'error',
    success: false,
    message: message,
    code: 'unauthorized',
    errors: [],
    errorCount: 0,
    requestId: requestId,
  };
  return {
    statusCode: 401,
    statusDescription: 'Unauthorized',
    headers: {
      'content-type': { value: 'application/json; charset=utf-8' },
      'cache-control': { value: 'no-store' },
      'x-request-id': { value: requestId },
      'www-authenticate': { value: challenge },
    },
    body: { encoding: 'text', data: JSON.stringify(body) },
  };
}

function invalid(event) {
  return refuse(event, 'Invalid or expired token', 'Bearer error="invalid_token"');
}

// A header as the origin gets it: repeated fields joined with commas.
function joined(headers, name) {
  var header = headers[name];
  if (!header) return undefined;
  if (!header.multiValue || header.multiValue.length < 2) return header.value;
  var values = [];
  for (var i = 0; i < header.multiValue.length; i++) values.push(header.multiValue[i].value);
  return values.join(',');
}

// Equal strings of equal length, in time that does not depend on where they differ.
function same(a, b) {
  if (a.length !== b.length) return false;
  var difference = 0;
  for (var i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

async function handler(event) {
  var request = event.request;
  if (anonymous(request.uri)) return request;
  var value = joined(request.headers, 'authorization');
  var bearer = value === undefined ? null : bearerPattern.exec(value);
  if (!bearer) return refuse(event, 'Missing bearer token', 'Bearer');
  var parts = signedPattern.exec(bearer[1]);
  if (!parts || parts[3].split('-').length !== ownerArity[parts[1]]) {
    return settings.acceptUnsigned ? request : invalid(event);
  }
  var secret;
  try {
    secret = await kvs.get('k' + parts[2]);
  } catch (error) {
    // No such key: made up (a rotation writes here before any function mints with a new key). Any other
    // failure of the store refuses too, on purpose: passing it on would let made-up key ids reach the
    // functions. The edge probe's token check (EdgeProbeAlarm) says when valid tokens are refused.
    return invalid(event);
  }
  var signedText = parts[1] + '_' + parts[2] + '.' + parts[3] + '.' + parts[4];
  var mac = crypto.createHmac('sha256', secret).update(signedText).digest('base64url').replace(/=+$/, '');
  return same(mac, parts[5]) ? request : invalid(event);
}
