import { InvalidRequestError } from '@plinth/shared';

/**
 * 400 when a record operation carries the user token in X-Auth-User-Token (the header of Auth
 * endpoints) and not in X-Db-User-Token: answering it as anonymous would silently hide the
 * user's data behind a rule refusal or an empty list.
 */
export function assertUserTokenHeader(headers: { [name: string]: string | string[] | undefined }): void {
  if (headers['x-auth-user-token'] !== undefined && headers['x-db-user-token'] === undefined) {
    throw new InvalidRequestError(
      'Record operations take the user token in the X-Db-User-Token header; X-Auth-User-Token is for Auth endpoints.',
      { header: 'X-Db-User-Token' },
    );
  }
}
