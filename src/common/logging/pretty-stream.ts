import pretty from 'pino-pretty';

/**
 * LOG_FORMAT=pretty: one readable line per event for a terminal (the default of
 * `npm start` when its output is one). Written synchronously in this thread, like the
 * JSON lines, so nothing is lost when the process exits.
 */
export function prettyStream() {
  return pretty({
    sync: true,
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,context,method,url,status,error',
    errorLikeObjectKeys: ['err'],
    singleLine: true,
    // e.g. "request completed GET /v1/orders/ord_x 404 resource_missing {…the other fields}"
    messageFormat: '{if context}[{context}] {end}{msg}{if method} {method} {url} {status}{end}{if error} {error}{end}',
  });
}
