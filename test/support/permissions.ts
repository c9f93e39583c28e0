/**
 * A table permission as spec 2.4 writes it: allowed, no export, no expiry, nothing hidden or
 * filtered, unless `fields` says otherwise. Shared by the tests and the bench's data.
 */
export const tablePermission = (tableId: number, fields: Record<string, unknown> = {}) => ({
  tableId,
  allowed: true,
  allow_export: false,
  expires_in: null,
  hidden_columns: [],
  filters: [],
  ...fields,
});
