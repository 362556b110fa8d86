/**
 * user@host:port/database, for logs and start-up errors: a URL's password and its other
 * parameters never reach them. A socket directory given as `?host=` counts as the host.
 */
export function describeDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const params = url.searchParams;
    const user = url.username ? decodeURIComponent(url.username) : params.get('user');
    const host = url.hostname ? decodeURIComponent(url.hostname) : (params.get('host') ?? 'localhost');
    const port = url.port || params.get('port');
    return `${user ? `${user}@` : ''}${host}${port ? `:${port}` : ''}${url.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}
