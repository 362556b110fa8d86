import { createServer } from 'node:net';
import { ConfigError } from './env-values';

/**
 * Checks before anything starts that HOST can be listened on: a name that does not
 * resolve (ENOTFOUND) or an address that is not this machine's (EADDRNOTAVAIL) would
 * otherwise fail only after the database and the workers have started, as a bare system
 * error. Binds port 0 (any free one) and closes it at once; whether PORT is free is
 * still only known when the server listens.
 */
export async function assertListenable(host: string): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, host, resolve);
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new ConfigError(
      'HOST',
      `cannot be listened on: ${code ?? message} (got "${host}"; 0.0.0.0 is every interface)`,
    );
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
