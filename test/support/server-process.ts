import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../../src/database/embedded-postgres';
import { databaseEnv } from './database';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Every line the server printed on stdout so far (its JSON logs). */
  stdout: string[];
  /** Resolves with the exit code (null when a signal ended it) once the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The built server (`node dist/main.js`) as a real process, for kill and shutdown tests.
 * `ownProcessGroup`: the leader of a process group of its own, as under a terminal, so
 * that the test can signal the whole group as Ctrl-C does.
 */
export async function startServerProcess(
  env: Record<string, string>,
  cwd?: string,
  { ownProcessGroup = false } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'main.js')], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      PORT: String(port),
      ...(env.DATABASE_URL ? databaseEnv(env.DATABASE_URL) : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd,
    detached: ownProcessGroup,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const stdout: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      stdout.push(line);
      if (line.includes('Listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    stdout,
    exited,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
