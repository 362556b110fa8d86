/**
 * The parameters of a connection URL that the pg driver reads (pg-connection-string and
 * pg's connection parameters, pg 8.x); libpq reads more. One it does not read changes
 * nothing, silently: a typo (`sslmod=require` connected in the clear) or a libpq habit
 * (`connect_timeout`, `target_session_attrs`). Said once at start-up, not refused: such a
 * URL may have worked for years.
 */
const READ_BY_PG = new Set([
  'host',
  'port',
  'user',
  'password',
  'database',
  'db',
  'encoding',
  'client_encoding',
  'options',
  'application_name',
  'fallback_application_name',
  'ssl',
  'sslmode',
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslnegotiation',
  'uselibpqcompat',
  'replication',
  'binary',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'query_timeout',
]);

/** One warning per parameter of `url` that the pg driver does not read. */
export function unreadUrlParameters(variable: string, url: string): string[] {
  return [...new URL(url).searchParams.keys()]
    .filter((name) => !READ_BY_PG.has(name))
    .map(
      (name) =>
        `${variable} names the parameter ${name}, which the pg driver does not read: it changes nothing ` +
        '(docs/operations.md, "TLS")',
    );
}

/** What a start-up says of the configured database URLs. */
export function databaseUrlWarnings(config: {
  databaseUrl: string | null;
  databaseDirectUrl: string | null;
}): string[] {
  return [
    ...(config.databaseUrl ? unreadUrlParameters('DATABASE_URL', config.databaseUrl) : []),
    ...(config.databaseDirectUrl ? unreadUrlParameters('DATABASE_DIRECT_URL', config.databaseDirectUrl) : []),
  ];
}
