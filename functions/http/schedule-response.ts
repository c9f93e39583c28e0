/** The answer of the routes that return a schedule file (get-schedule, put-schedule): HTTP, so beside its handlers, not in core. */
import type { ApiRequest, ApiResponse } from '#functions/core/api/http-handler.ts';
import { prefersYaml, toYaml } from '#functions/core/api/yaml-body.ts';
import { inSpecOrder } from '#functions/core/schedules/schedule-file.ts';
import type { ScheduleRecord } from '#functions/core/schedules/schedule-repository.ts';
import { etagOf } from '#functions/core/api/if-match.ts';

/** A schedule file as the API answers with it: YAML or JSON by Accept, with its version as ETag. */
export function scheduleResponse(request: Pick<ApiRequest, 'headers'>, record: ScheduleRecord, status: number): ApiResponse {
  const headers = { etag: etagOf(record.version) };
  const file = inSpecOrder(record.file);
  return prefersYaml(request)
    ? { status, body: toYaml(file), headers: { ...headers, 'content-type': 'application/yaml; charset=utf-8' } }
    : { status, body: { status: 'success', data: file }, headers };
}
