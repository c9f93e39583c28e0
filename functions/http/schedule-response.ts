import type { ApiRequest, ApiResponse } from '../api/http-handler.ts';
import { prefersYaml, toYaml } from '../api/yaml-body.ts';
import type { ScheduleRecord } from './schedule-repository.ts';
import { etagOf } from './schedules.ts';

/** A schedule file as the API answers with it: YAML or JSON by Accept, with its version as ETag. */
export function scheduleResponse(request: Pick<ApiRequest, 'headers'>, record: ScheduleRecord, status: number): ApiResponse {
  const headers = { etag: etagOf(record.version) };
  return prefersYaml(request)
    ? { status, body: toYaml(record.file), headers: { ...headers, 'content-type': 'application/yaml; charset=utf-8' } }
    : { status, body: { status: 'success', data: record.file }, headers };
}
