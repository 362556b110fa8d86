import { createServer } from 'node:net';
import { ConfigError } from './env-values';

/** Refusals that are about the port, reported as the listen itself would report them. */
const PORT_REFUSALS = new Set(['EADDRINUSE', 'EACCES']);

/**
 * Checks before anything starts that HOST and PORT can be listened on, by binding them and
 * closing at once. A taken port (EADDRINUSE), a name that does not resolve (ENOTFOUND) or
 * an address that is not this machine's (EADDRNOTAVAIL) would otherwise fail only after
 * the database, the migrations and the notification workers had started. The port can
 * still be taken between this check and the listen; the listen then fails as before.
 */
export async function assertListenable(host: string, port: number): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, host, resolve);
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code !== undefined && PORT_REFUSALS.has(code)) throw error;
    throw new ConfigError(
      'HOST',
      `cannot be listened on: ${code ?? message} (got "${host}"; 0.0.0.0 is every interface)`,
    );
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}

/** What to change when listening failed (checked before anything started, or at the listen itself). */
export function listenFailureHint(error: unknown): string | null {
  const { code, syscall, port } = error as NodeJS.ErrnoException & { port?: number };
  if (syscall !== 'listen') return null;
  if (code === 'EADDRINUSE') return 'set PORT (or HOST) to a free address, or stop what listens there';
  if (code !== 'EACCES') return null;
  return port !== undefined && port < 1024
    ? 'ports below 1024 need privileges: set PORT to 1024 or above'
    : 'this user may not listen there: set PORT (or HOST) to an address it may use';
}
