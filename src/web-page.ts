/**
 * A web page where the API's JSON or XML was expected: a proxy's or single sign-on's login page,
 * or a portal in front of the server, answering 200 for every request. Trying again does not help
 * and no document is to blame: the address or the credentials are wrong.
 */
export const WEB_PAGE = 'the server answered a web page (a login page?) — check the URL and the credentials';

/** True for an answer that is an HTML page, by its content type or, without one, by how it begins. */
export function isWebPage(contentType: unknown, body?: string): boolean {
  if (typeof contentType === 'string') return /^\s*(text\/html|application\/xhtml)/i.test(contentType);
  return body !== undefined && /^\s*(<!doctype html|<html)/i.test(body);
}
