/** The built server (`node dist/main.js`) as a child process that can be killed and restarted. */
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

/** Starts the server and resolves once GET /health answers (whatever the log level). */
async function startServer(env, timeoutMs = 60000) {
  const url = `http://127.0.0.1:${env.PORT}`;
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) before listening: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

module.exports = { startServer };
